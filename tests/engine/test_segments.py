"""Segment layouts: drawn at the seams, described as each kind says, shrunk to fewer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from scancheck.engine.segments import (
    TILES,
    Layout,
    draw_layout,
    for_kind,
    segment_lengths,
    shrunk_layouts,
)
from scancheck.engine.spec import TargetSpec
from scancheck.oracle.segmented import KINDS, segment_ids


def _layouts(kind, t, count=400):
    return [draw_layout(np.random.default_rng(s), t, kind) for s in range(count)]


def test_offsets_layouts_reach_every_seam():
    seen = set()
    for lay in _layouts("offsets", 5000):
        lengths = list(lay.lengths)
        starts = np.cumsum([0, *lengths])[:-1]
        if lengths and lengths[0] == 0:
            seen.add("empty first")
        if lengths and lengths[-1] == 0:
            seen.add("empty last")
        if any(v == 0 for v in lengths[1:-1]):
            seen.add("empty middle")
        if lengths.count(1) > len(lengths) // 2 > 0:
            seen.add("length 1")
        if len(lengths) > 1000:
            seen.add("many tiny")
        if max(lengths, default=0) > 4 * 512:
            seen.add("longer than many tiles")
        for tile in TILES:
            for d, name in ((-1, "before"), (0, "on"), (1, "after")):
                if any((s - d) % tile == 0 and s - d > 0 for s in starts):
                    seen.add(f"{name} {tile}")
        seen.add(lay.index_dtype)
    want = {"empty first", "empty middle", "empty last", "length 1", "many tiny",
            "longer than many tiles", "int32", "int64",
            *(f"{w} {t}" for t in TILES for w in ("before", "on", "after"))}
    assert want <= seen, want - seen


@pytest.mark.parametrize("kind", KINDS)
def test_a_layout_is_described_as_its_kind_says(kind):
    for lay in _layouts(kind, 300, 60):
        desc = lay.description()
        ids = segment_ids(kind, desc, lay.t)
        if kind == "groups":
            assert np.array_equal(np.unique(desc, return_inverse=True)[1], ids)
        else:  # flags and keys cannot say an empty segment
            assert kind == "offsets" or 0 not in lay.lengths
            assert np.bincount(ids, minlength=len(lay.lengths)).tolist() == list(lay.lengths)


@pytest.mark.parametrize("kind", KINDS)
def test_every_shrunk_layout_is_smaller_and_keeps_its_elements(kind):
    lay = draw_layout(np.random.default_rng(3), 200, kind)
    for small, keep in shrunk_layouts(lay):
        assert small.t == keep.size < lay.t or (small.t == lay.t and (
            len(small.lengths) < len(lay.lengths)))
        assert np.all(np.diff(keep) > 0)
        segment_ids(kind, small.description(), small.t)  # a valid description


@given(segment_lengths(max_total=500, max_segments=10))
def test_segment_lengths_stay_within_their_total(lengths):
    assert sum(lengths) <= 500 and len(lengths) <= 10 and min(lengths, default=0) >= 0


def test_keys_of_touching_segments_are_made_distinct():
    lay = for_kind(Layout((2, 0, 3), "offsets", "x", keys=(1, 2, 1)), "keys")
    assert lay.lengths == (2, 3) and lay.keys[0] != lay.keys[1]


@pytest.mark.parametrize("fields, words", [
    ({"segments": "ragged"}, "must be None .* or one of offsets"),
    ({"segments": "offsets", "axis": "arg"}, "axis=0"),
    ({"segments": "flags", "initial": True}, "without an initial value"),
    ({"segments": "keys", "op": "max", "indices": True}, "without an initial value or indices"),
    ({"segments": "groups", "op": "recurrence", "dtypes": ("float32",)}, "add, mul, max"),
    ({"segments": "flags", "combine": True}, "not over tuples"),
    # Contracts the segments property does not read are refused, not accepted unchecked.
    ({"segments": "offsets", "nans": "skip"}, "nans='skip': not checked on segmented"),
    ({"segments": "flags", "overflow": "raise", "dtypes": ("int32",)}, "overflow='raise'"),
    ({"segments": "flags", "axis": 0, "ndim": (2,)}, "ndim=\\(2,\\): not checked"),
])
def test_a_spec_with_segments_it_cannot_check_is_refused(fields, words):
    with pytest.raises(ValueError, match=words):
        TargetSpec(**fields)
