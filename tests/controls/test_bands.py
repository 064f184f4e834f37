"""The band controls are what they claim: wrong only at n > 5000 with n % 64 == 7, and there
a contract (checked overflow, the other reverse convention) fits the one case alone, so that
only a longer case tells the logic error from the contract."""

from __future__ import annotations

import numpy as np
import pytest

from scancheck.controls import bands
from scancheck.core.arrays import as_dtype
from scancheck.core.dtypes import FLOAT_DTYPES
from scancheck.core.monoids import PROBES
from scancheck.engine.cases import Case
from scancheck.engine.diagnosis import Cause
from scancheck.engine.properties.overflow import integers_checked
from scancheck.oracle.monoid_scan import monoid_scan
from scancheck.targets.resolve import resolve

#: In the band, just below it, and the longer case a contract is checked on (2n + 1).
BAND, BELOW, LONGER = 5063, 5062, 2 * 5063 + 1


def test_the_band_is_one_residue_past_5000():
    assert [n for n in range(5000, 5200) if bands.in_the_band(n)] == [5063, 5127, 5191]
    assert not bands.in_the_band(LONGER)


@pytest.mark.parametrize("name", ["bicyclic", "affine mod 2**32"])
def test_the_reverse_scan_follows_flip_in_the_band_and_suffix_elsewhere(name):
    monoid = PROBES[name]
    for n in (BAND, BELOW, LONGER):
        elems = monoid.draw(np.random.default_rng(n), (n,))
        got = bands.reverse_flipped_at_some_sizes(elems, monoid.bound)
        flip, suffix = (monoid_scan(monoid, elems, True, c) for c in ("flip", "suffix"))
        fits = {c: all(np.array_equal(g, w) for g, w in zip(got, want))
                for c, want in (("flip", flip), ("suffix", suffix))}
        # Non-commutative: the two conventions differ, and each size fits exactly one.
        assert fits == {"flip": n == BAND, "suffix": n != BAND}, n


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_the_sum_raises_on_overflow_in_the_band_and_wraps_elsewhere(dtype):
    big = np.iinfo(dtype).max // 4
    for n in (BAND, BELOW, LONGER):
        x = np.full(n, big, dtype=dtype)
        if n == BAND:
            with pytest.raises(OverflowError):
                bands.sum_raising_on_overflow_at_some_sizes(x)
        else:
            with np.errstate(over="ignore"):
                want = np.add.accumulate(x, dtype=x.dtype)
            assert np.array_equal(bands.sum_raising_on_overflow_at_some_sizes(x), want)
    small = np.ones(BAND, dtype=dtype)  # no prefix leaves the type: right in the band too
    assert np.array_equal(bands.sum_raising_on_overflow_at_some_sizes(small), np.cumsum(small))


def test_one_case_in_the_band_alone_reads_as_checked_overflow():
    """What the control guards against: judged on its band case alone, 'integers exact'
    names the contract 'checks overflow' with its flag; the contract's check on a longer
    case is what must refute it."""
    target = resolve("scancheck.controls.bands:sum_raising_on_overflow_at_some_sizes")
    failure = integers_checked(target, Case(BAND, "int32", "uniform", 3118924388))
    assert failure is not None and failure.cause == Cause.CONTRACT
    assert failure.contract is not None and failure.contract.flag == "--overflow raise"
    assert integers_checked(target, Case(BELOW, "int32", "uniform", 3118924388)) is None


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_the_sum_reads_a_tail_nan_as_zero_in_the_band_for_every_float_type(dtype):
    """A NaN in the last partial tile is zeroed at the band's size alone, in every float type
    the search draws (bfloat16, NumPy kind 'V', too): a type it spared would be a quarter
    of the sweep's cases that cannot meet the bug."""
    for n in (BAND, BELOW, LONGER):
        x = np.ones(n, dtype=as_dtype(dtype))
        x[-2] = np.nan
        got = bands.sum_reading_nan_as_zero_at_some_sizes(x)
        assert np.isnan(got[-1]) == (n != BAND), n
