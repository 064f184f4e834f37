"""The contract rules: zero orders, NaN rules and the exact max and min scans under them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.core.operators import sequential_scan
from scancheck.core.rules import arg_extreme_scan, extreme_scan
from scancheck.oracle.exact import exact_scan
from scancheck.targets.spec import TargetSpec
from scancheck.testing import assert_same_bits


def test_extreme_scans_order_zeros_and_treat_nan_as_declared():
    x = np.array([-0.0, 0.0, np.nan, -0.0], dtype=np.float32)
    bits = lambda a: np.signbit(a).tolist()  # noqa: E731
    assert bits(extreme_scan(x[:2], "max")) == [True, True]  # the earlier zero wins ties
    assert bits(extreme_scan(x[:2], "max", zeros="ordered")) == [True, False]
    assert bits(extreme_scan(-x[:2], "min", zeros="ordered")) == [False, True]
    assert np.isnan(extreme_scan(x, "max")[2:]).all()
    ignored = extreme_scan(x, "max", zeros="ordered", nans="ignore")
    assert ignored.tolist() == [0, 0, 0, 0] and bits(ignored) == [True, False, False, False]
    assert np.isnan(extreme_scan(np.array([np.nan, 1.0]), "min", nans="ignore")[0])
    with pytest.raises(ValueError, match="zeros='signed'.*allowed: either, ordered"):
        extreme_scan(x, "max", zeros="signed")
    with pytest.raises(ValueError, match="nans='drop'.*allowed: propagate, ignore"):
        TargetSpec(op="max", nans="drop")
    with pytest.raises(ValueError, match="apply to max and min, not to operator 'add'"):
        exact_scan(x, "add", zeros="ordered")


@given(x=st.lists(st.sampled_from([-1.0, 0.0, -0.0, 2.0, float("nan"), float("inf"),
                                   float("-inf")]), min_size=1, max_size=40),
       which=st.sampled_from(["max", "min"]))
def test_cummax_and_cummin_with_indices_are_the_argmax_and_argmin_monoids(x, which):
    """The vectorised oracle equals a left fold of the monoid on (value, index) pairs: the
    last index of each running extreme, a NaN's once one is seen, the value at it."""
    a = np.array(x)
    values, idx = arg_extreme_scan(a, which)
    pairs = sequential_scan(np.stack([a, np.arange(a.size, dtype=float)], -1), f"arg{which}")
    np.testing.assert_array_equal(idx, pairs[:, 1])
    assert_same_bits(values, pairs[:, 0])
    assert_same_bits(values, a[idx])
