"""Segmented inputs: segment layouts drawn where segmented scans break, and the description
a target is handed (offsets, flags, keys or groups).

A :class:`Layout` is a list of segment lengths (empty segments included), and for groups
each element's label.  :func:`draw_layout` draws one from a case's seed in a class of its
own: empty segments at the start, middle and end; length-1 segments; segments that start
exactly at, one before and one after the tile and chunk boundaries GPU kernels use (32 to
4096, smaller tiles for small n); one segment over many tiles among short ones; many tiny
segments; groups in interleaved labels or in runs whose labels recur.  The lengths are a
list, so a failure shrinks to fewer and shorter segments (:func:`shrunk_layouts`), and
:func:`segment_lengths` is the same list as a Hypothesis strategy.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from hypothesis import strategies as st

#: Tile and chunk sizes of GPU kernels whose boundaries segments start at, on and beside.
TILES: tuple[int, ...] = (32, 64, 128, 256, 512, 1024, 2048, 4096)

#: The layout classes of contiguous segments, and their weights.
CLASSES: dict[str, float] = {"empty segments": 2, "length-1 segments": 1,
                             "tile boundaries": 3, "one long segment": 2,
                             "many tiny segments": 2, "random lengths": 2}
#: The classes of group labels (segments='groups').
GROUP_CLASSES: dict[str, float] = {"interleaved labels": 2, "runs of recurring labels": 2,
                                   "one group": 1, "labels past 32 bits": 1}


@dataclass(frozen=True)
class Layout:
    """Segment lengths along axis 0 (their sum is T) and, for groups, each element's label;
    ``index_dtype`` is the integer type of offsets, ``shape_class`` how it was drawn."""

    lengths: tuple[int, ...]
    kind: str
    shape_class: str
    index_dtype: str = "int64"
    labels: tuple[int, ...] | None = None
    #: Key of each segment (segments='keys'): adjacent ones differ.
    keys: tuple[int, ...] | None = None
    #: Whether a flag is set on element 0 (segments='flags': it starts a segment either way).
    flag_first: bool = True

    @property
    def t(self) -> int:
        return len(self.labels) if self.labels is not None else sum(self.lengths)

    def description(self) -> np.ndarray:
        """What the target is handed beside its data."""
        if self.kind == "groups":
            return np.asarray(self.labels, np.int64).reshape(-1)
        lengths = np.asarray(self.lengths, np.int64)
        if self.kind == "offsets":
            return np.concatenate([[0], np.cumsum(lengths)]).astype(self.index_dtype)
        starts = np.cumsum(lengths) - lengths
        live = lengths > 0
        if self.kind == "flags":
            flags = np.zeros(self.t, bool)
            flags[starts[live]] = True
            if self.t:
                flags[0] = self.flag_first
            return flags
        keys = np.asarray(self.keys, np.int32)
        return np.repeat(keys, lengths)

    def describe(self, limit: int = 40) -> dict[str, Any]:
        """As a smallest case shows it: the description whole where it is short, and the class
        it was drawn in (a shrunk one may no longer be of it: 'drawn as', not 'layout', which
        a case keeps for the memory layout)."""
        d: dict[str, Any] = {"segments": self.kind, "drawn as": self.shape_class}
        desc = self.description()
        if desc.size <= limit:
            d[self.kind] = desc.tolist()
        else:
            d["segment count"] = len(set(self.labels)) if self.labels else len(self.lengths)
        if self.kind == "offsets":
            d["offsets dtype"] = self.index_dtype
        return d


def _pick(rng: np.random.Generator, table: dict[str, float]) -> str:
    names = list(table)
    w = np.array(list(table.values()))
    return names[int(rng.choice(len(names), p=w / w.sum()))]


def _lengths(rng: np.random.Generator, t: int, cls: str) -> list[int]:
    """Segment lengths summing to ``t`` in class ``cls`` (see :data:`CLASSES`)."""
    if t == 0:
        return [0] * int(rng.integers(0, 3))
    if cls == "tile boundaries":
        tiles = [s for s in TILES if s <= t] or [s for s in (4, 8, 16) if s <= t] or [1]
        tile = int(rng.choice(tiles))
        cuts = set()
        for m in range(1, t // tile + 1):
            if rng.random() < 0.7:
                cuts.add(m * tile + int(rng.integers(-1, 2)))
        cuts = sorted(c for c in cuts if 0 < c < t)
        edges = [0, *cuts, t]
        return [b - a for a, b in zip(edges, edges[1:])]
    if cls == "one long segment":
        long_len = max(1, int(t * rng.uniform(0.5, 1.0)))
        before = int(rng.integers(0, t - long_len + 1))
        return [*_lengths(rng, before, "many tiny segments"), long_len,
                *_lengths(rng, t - long_len - before, "many tiny segments")]
    if cls == "length-1 segments":
        out, left = [], t
        while left:
            k = 1 if rng.random() < 0.7 else int(rng.integers(1, min(left, 9) + 1))
            out.append(min(k, left))
            left -= out[-1]
        return out
    top = 4 if cls == "many tiny segments" else max(2, int(rng.integers(2, max(t, 2) + 1)))
    out, left = [], t
    while left:
        out.append(min(int(rng.integers(1 if cls != "many tiny segments" else 0, top)), left))
        left -= out[-1]
    if cls == "empty segments":  # empty segments at the start, in the middle and at the end
        for _ in range(int(rng.integers(1, 4))):
            out.insert(int(rng.choice([0, len(out), int(rng.integers(0, len(out) + 1))])), 0)
    return out


def _keys(rng: np.random.Generator, count: int) -> tuple[int, ...]:
    """Keys of ``count`` segments, adjacent ones different, earlier keys recurring later (a
    by-key scan must not join them); a quarter of the time adjacent keys differ only past
    their low 8, 16 or 24 bits (a scan that narrows its keys joins them)."""
    if rng.random() < 0.25:
        base = int(rng.integers(-3, 4))
        step = int(rng.choice([2**8, 2**16, 2**24]))
        return tuple(base + (i % 2) * step for i in range(count))
    keys: list[int] = []
    for _ in range(count):
        k = int(rng.integers(-3, 4))
        if keys and k == keys[-1]:
            k += 7
        keys.append(k)
    return tuple(keys)


def for_kind(layout: Layout, kind: str) -> Layout:
    """``layout`` as description ``kind`` can say it: flags and keys cannot hold an empty
    segment, so they drop them (keys made anew where two segments come to touch)."""
    if kind in ("flags", "keys"):
        lengths = tuple(v for v in layout.lengths if v > 0)
        keys = layout.keys
        if kind == "keys" and (keys is None or len(keys) != len(lengths) or any(
                a == b for a, b in zip(keys, keys[1:]))):
            keys = tuple(int(i % 2 * 7 + i // 2 % 3) for i in range(len(lengths)))
        return replace(layout, lengths=lengths, keys=keys, kind=kind)
    return replace(layout, kind=kind)


def draw_layout(rng: np.random.Generator, t: int, kind: str, index_dtype: str | None = None
                ) -> Layout:
    """A layout of ``t`` elements for description ``kind``, in a class drawn from ``rng``;
    offsets of ``index_dtype`` (None: int32 or int64, drawn)."""
    if kind == "groups":
        cls = _pick(rng, GROUP_CLASSES)
        if cls == "one group":
            labels = np.full(t, int(rng.integers(-5, 5)))
        elif cls == "interleaved labels":
            labels = rng.integers(-3, int(rng.integers(1, 40)), t)
        elif cls == "labels past 32 bits":
            # Distinct labels whose low 32 bits agree, and int64's extremes: a target that
            # narrows its labels to 32 bits merges groups.
            labels = rng.integers(-3, int(rng.integers(1, 8)), t) * 2**32 + 7
            ends = np.iinfo(np.int64)
            labels[rng.random(t) < 0.1] = ends.min
            labels[rng.random(t) < 0.1] = ends.max
        else:  # runs (tile boundaries among them) whose labels recur: one group, many runs
            lengths = _lengths(rng, t, _pick(rng, CLASSES))
            run_labels = rng.integers(0, max(1, len(lengths) // 2 + 1), len(lengths)) * 1000
            labels = np.repeat(run_labels, lengths)
        return Layout((t,), kind, cls, labels=tuple(int(v) for v in labels))
    cls = _pick(rng, CLASSES)
    lengths = _lengths(rng, t, cls)
    drawn = "int32" if rng.random() < 0.5 else "int64"
    layout = Layout(tuple(lengths), kind, cls, index_dtype or drawn,
                    keys=_keys(rng, len(lengths)), flag_first=bool(rng.random() < 0.8))
    return for_kind(layout, kind)


def shrunk_layouts(layout: Layout) -> Iterator[tuple[Layout, np.ndarray]]:
    """Smaller layouts than ``layout``, each with the positions (along axis 0) of the
    elements it keeps, fewest segments first: halves, quarters ... of the segments
    removed or joined to the segment before them, then each segment emptied, cut to one
    element, to its first or its later half, or to all but its first element."""
    if layout.labels is not None:
        labels = np.asarray(layout.labels)
        groups = list(dict.fromkeys(labels.tolist()))
        for drop in _chunks(groups):
            keep = np.flatnonzero(~np.isin(labels, drop))
            yield replace(layout, labels=tuple(labels[keep].tolist()), lengths=(keep.size,)), keep
        for drop in _chunks(list(range(labels.size))):
            keep = np.setdiff1d(np.arange(labels.size), drop)
            yield replace(layout, labels=tuple(labels[keep].tolist()), lengths=(keep.size,)), keep
        return
    lengths = list(layout.lengths)
    starts = np.cumsum([0, *lengths])
    segs = list(range(len(lengths)))

    def keeping(new: list[int], spans: list[np.ndarray], keys: list[int] | None) -> tuple[
            Layout, np.ndarray]:
        pos = np.concatenate(spans) if spans else np.zeros(0, np.int64)
        return for_kind(replace(layout, lengths=tuple(new), keys=None if keys is None else
                                tuple(keys)), layout.kind), pos.astype(np.int64)

    for drop in _chunks(segs):
        gone = set(drop)
        kept = [i for i in segs if i not in gone]
        yield keeping([lengths[i] for i in kept],
                      [np.arange(starts[i], starts[i + 1]) for i in kept],
                      [layout.keys[i] for i in kept] if layout.keys else None)
        # The same segments joined to the one before them instead: fewer segments, every
        # element where it was (a bug at a tile or chunk boundary stays there).
        gone.discard(0)
        if not gone:
            continue
        merged: list[int] = []
        for i in segs:
            if i in gone:
                merged[-1] += lengths[i]
            else:
                merged.append(lengths[i])
        yield keeping(merged, [np.arange(starts[-1])],
                      [k for i, k in enumerate(layout.keys) if i not in gone]
                      if layout.keys else None)
    for i in segs:
        # Its first elements, or its last ones: a bug that needs an element late in its
        # segment (an infinity after finite values) is kept by the latter.
        cuts = [(0, n) for n in ((0,) if layout.kind == "offsets" else ()) + (1, lengths[i] // 2)]
        cuts += [(lengths[i] - n, n) for n in (lengths[i] - lengths[i] // 2, lengths[i] - 1)]
        for skip, new_len in dict.fromkeys(cuts):
            if not 0 <= new_len < lengths[i]:
                continue
            new = lengths[:i] + [new_len] + lengths[i + 1:]
            spans = [np.arange(starts[j], starts[j + 1]) for j in segs if j != i]
            spans.insert(i, np.arange(starts[i] + skip, starts[i] + skip + new_len))
            yield keeping(new, spans, list(layout.keys) if layout.keys else None)


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    """Runs of ``items`` to remove, largest first: the halves, then the quarters, ... then
    each item alone (delta debugging)."""
    size = len(items) // 2
    while size >= 1:
        for lo in range(0, len(items), size):
            yield items[lo:lo + size]
        if size == 1:
            break
        size //= 2
    if len(items) == 1:
        yield items


def segment_lengths(max_total: int = 4096, max_segments: int = 64
                    ) -> st.SearchStrategy[list[int]]:
    """Segment lengths as a list (empty and length-1 segments, lengths at and beside tile
    sizes), at most ``max_total`` elements in all: a failure shrinks to fewer, shorter
    segments."""
    edge = st.sampled_from([t + d for t in TILES for d in (-1, 0, 1) if t + d <= max_total] or [1])
    length = st.one_of(st.integers(0, 3), st.integers(0, max_total), edge)
    return st.lists(length, max_size=max_segments).filter(lambda v: sum(v) <= max_total)
