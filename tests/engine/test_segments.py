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
from scancheck.oracle.segmented import KINDS, segment_ids
from scancheck.targets.spec import TargetSpec


def _layouts(kind, t, count=400):
    return [draw_layout(np.random.default_rng(s), t, kind) for s in range(count)]


def test_offsets_layouts_reach_every_seam():
    """Among the first 400 layouts drawn (seeds 0-399), every seam at once: drawn one at a
    time, and the search stops at the first layout by which all were reached (seed 30 of
    400 when written), not after every one of them."""
    want = {"empty first", "empty middle", "empty last", "length 1", "many tiny",
            "longer than many tiles", "int32", "int64",
            *(f"{w} {t}" for t in TILES for w in ("before", "on", "after"))}
    seen = set()
    for s in range(400):
        if want <= seen:
            break
        lay = draw_layout(np.random.default_rng(s), 5000, "offsets")
        lengths = np.asarray(lay.lengths, dtype=np.int64)
        starts = np.cumsum(np.r_[0, lengths])[:-1]
        if lengths.size and lengths[0] == 0:
            seen.add("empty first")
        if lengths.size and lengths[-1] == 0:
            seen.add("empty last")
        if (lengths[1:-1] == 0).any():
            seen.add("empty middle")
        if (lengths == 1).sum() > lengths.size // 2 > 0:
            seen.add("length 1")
        if lengths.size > 1000:
            seen.add("many tiny")
        if lengths.max(initial=0) > 4 * 512:
            seen.add("longer than many tiles")
        for tile in TILES:  # as arrays: 400 layouts of up to 5000 starts each
            for d, name in ((-1, "before"), (0, "on"), (1, "after")):
                if (((starts - d) % tile == 0) & (starts - d > 0)).any():
                    seen.add(f"{name} {tile}")
        seen.add(lay.index_dtype)
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


def test_a_segment_shrinks_to_its_later_elements_too():
    """A bug that needs an element late in its segment (an infinity after finite values)
    shrinks: a segment is cut to its later half and to all but its first element too."""
    kept = [keep.tolist() for _, keep in shrunk_layouts(Layout((7,), "offsets", "x"))]
    assert [3, 4, 5, 6] in kept and [1, 2, 3, 4, 5, 6] in kept, kept


def test_a_shrunk_layout_names_the_class_it_was_drawn_in_not_a_shape_it_lost():
    """Shrinking an 'empty segments' layout can drop every empty segment: its case says how
    it was drawn, under a key of its own ('layout' is the memory layout's)."""
    drawn = (draw_layout(np.random.default_rng(seed), 12, "offsets") for seed in range(200))
    lay = next(d for d in drawn if d.shape_class == "empty segments")
    lost = [small for small, _ in shrunk_layouts(lay) if 0 not in small.lengths]
    assert lost, lay
    case = lost[0].describe()
    assert case["drawn as"] == "empty segments" and "layout" not in case, case


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
