"""The exact segmented oracle: every segment's exact scan alone, whatever the description."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.engine.segments import Layout, for_kind, segment_lengths
from scancheck.oracle.exact import exact_scan
from scancheck.oracle.segmented import KINDS, exact_segmented_scan, segment_ids


def _by_hand(x, ids, op, inclusive, reverse):
    """Each segment gathered, scanned alone by the 1-D exact oracle, and put back."""
    out = np.zeros_like(x)
    for s in np.unique(ids):
        at = np.flatnonzero(ids == s)
        if reverse:
            at = at[::-1]
        for c in range(x.shape[1]):
            out[at, c] = exact_scan(x[at, c], op, inclusive)
    return out


@given(lengths=segment_lengths(max_total=300, max_segments=20),
       kind=st.sampled_from(KINDS), op=st.sampled_from(("add", "max", "min")),
       inclusive=st.booleans(), reverse=st.booleans(), heads=st.integers(1, 3),
       seed=st.integers(0, 2**32 - 1))
def test_each_segment_is_its_exact_scan_alone(lengths, kind, op, inclusive, reverse, heads, seed):
    rng = np.random.default_rng(seed)
    t = sum(lengths)
    layout = for_kind(Layout(tuple(lengths), kind, "drawn", keys=None), kind)
    if kind == "groups":  # labels of the segments, some recurring out of order
        labels = rng.integers(0, max(1, len(lengths)), len(lengths))
        layout = Layout((t,), kind, "drawn", labels=tuple(np.repeat(labels, lengths).tolist()))
    desc = layout.description()
    x = rng.standard_normal((t, heads)).astype(np.float32)
    ids = segment_ids(kind, desc, t)
    got = exact_segmented_scan(x, kind, desc, op, inclusive, reverse)
    want = _by_hand(x, ids, op, inclusive, reverse)
    assert np.array_equal(got, want)
    if kind != "groups":  # the lengths come back (flags and keys hold no empty segment)
        assert np.bincount(ids, minlength=len(layout.lengths)).tolist() == list(layout.lengths)


def test_groups_are_pandas_groupby_cumsum():
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    rng = np.random.default_rng(0)
    x = rng.integers(-100, 100, 500).astype(np.int64)
    labels = rng.integers(-4, 9, 500)
    want = pd.Series(x).groupby(labels).cumsum().to_numpy()
    assert np.array_equal(exact_segmented_scan(x, "groups", labels), want)


@pytest.mark.parametrize("kind, desc, words", [
    ("offsets", np.array([1, 3, 5], np.int32), "from 0 to n = 5"),
    ("offsets", np.array([0, 3], np.int32), "from 0 to n = 5"),
    ("offsets", np.array([0, 4, 2, 5], np.int64), "must not decrease: offsets[1] = 4"),
    ("offsets", np.array([0.0, 5.0]), "int32 or int64"),
    ("offsets", np.zeros((2, 2), np.int32), "1-D"),
    ("flags", np.array([1, 0, 0, 1, 0]), "must be bool"),
    ("flags", np.ones(4, bool), "one entry per element: 4 for n = 5"),
    ("keys", np.array([1.0, np.nan, 2, 2, 2]), "without NaN"),
    ("groups", np.array(["a"] * 5), "integers, bools or floats"),
    ("segments", np.zeros(5), "must be one of offsets, flags, keys, groups"),
])
def test_an_invalid_description_is_refused_naming_what_is_allowed(kind, desc, words):
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        exact_segmented_scan(np.ones(5, np.float32), kind, desc)
