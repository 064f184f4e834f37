"""Segmented scans, exactly: a segment description (offsets, flags, keys or groups) read
and checked, each segment laid out as a row, and the exact oracle run on every row.

A segment description is what a segmented scan is handed beside its data: ``offsets``
(cu_seqlens: nseg + 1 integers from 0 to n, non-decreasing, int32 or int64), ``flags``
(bool, True where a segment starts; element 0 starts one whatever its flag), ``keys`` (a
run of equal keys is one segment, as Thrust's ``inclusive_scan_by_key``) or ``groups``
(labels in any order: the elements of one label are scanned in order, as pandas'
``groupby().cumsum()``).  :func:`segment_ids` reads any of them as one segment number per
element; :func:`segment_rows` lays the segments out as rows of an index matrix, bucketed by
length so that the rows hold at most about twice the elements whatever the lengths; and
:func:`exact_segmented_scan` is :func:`~scancheck.oracle.exact.exact_scan_axis` of every
row: each segment rounded once, as if scanned alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .exact import exact_scan_axis

#: The ways a segmented scan is told its segments (the spec's ``segments``).
KINDS: tuple[str, ...] = ("offsets", "flags", "keys", "groups")


def _one_d(desc: Any, kind: str) -> np.ndarray:
    a = np.asarray(desc)
    if a.ndim != 1:
        raise ValueError(f"{kind} must be a 1-D array, got shape {a.shape}")
    return a


def segment_ids(kind: str, desc: Any, n: int) -> np.ndarray:
    """The segment number (int64, 0 up) of each of the ``n`` elements that the description
    ``desc`` of ``kind`` gives; a ValueError naming ``kind`` and what is allowed where
    ``desc`` is no valid description of ``n`` elements.  For offsets, flags and keys the
    numbers never decrease (an empty segment takes a number no element has); for groups they
    are the labels' ranks."""
    if kind not in KINDS:
        raise ValueError(f"segments={kind!r} must be one of {', '.join(KINDS)}")
    a = _one_d(desc, kind)
    if kind == "offsets":
        if a.dtype.name not in ("int32", "int64"):
            raise ValueError(f"offsets must be int32 or int64 (cu_seqlens), got {a.dtype}")
        if a.size == 0 or a[0] != 0 or a[-1] != n:
            ends = "none" if a.size == 0 else f"{a[0]} and {a[-1]}"
            raise ValueError(f"offsets must run from 0 to n = {n} (nseg + 1 of them), got "
                             f"{a.size} offsets, first and last {ends}")
        steps = np.diff(a.astype(np.int64))
        if (steps < 0).any():
            k = int(np.flatnonzero(steps < 0)[0])
            raise ValueError(f"offsets must not decrease: offsets[{k}] = {a[k]} > "
                             f"offsets[{k + 1}] = {a[k + 1]}")
        return np.repeat(np.arange(a.size - 1, dtype=np.int64), steps)
    if a.size != n:
        raise ValueError(f"{kind} must have one entry per element: {a.size} for n = {n}")
    if kind == "flags":
        if a.dtype != np.bool_:
            raise ValueError(f"flags must be bool (True where a segment starts), got {a.dtype}")
        heads = a.copy()
        if n:
            heads[0] = False  # element 0 starts segment 0, flagged or not
        return np.cumsum(heads, dtype=np.int64)
    if a.dtype.kind not in "biuf" or (a.dtype.kind == "f" and np.isnan(a).any()):
        raise ValueError(f"{kind} must be integers, bools or floats without NaN (a NaN equals "
                         f"no key), got {a.dtype}")
    if kind == "keys":
        starts = np.concatenate([[False], a[1:] != a[:-1]]) if n else np.zeros(0, bool)
        return np.cumsum(starts, dtype=np.int64)
    return np.unique(a, return_inverse=True)[1].astype(np.int64).reshape(n)


@dataclass(frozen=True)
class SegmentRows:
    """The segments of a scan as rows, in buckets of like length: in each bucket an index
    matrix into the scanned axis, one row per non-empty segment in scan order (reversed for
    a reverse scan), -1 past the segment's end; and each row's segment number."""

    index: tuple[np.ndarray, ...]
    segment: tuple[np.ndarray, ...]


def segment_rows(ids: np.ndarray, reverse: bool = False) -> SegmentRows:
    """The rows of the segments that ``ids`` (:func:`segment_ids`) gives, each segment's
    elements in the order its scan combines them; rows of lengths in (2**(b-1), 2**b] share
    bucket b."""
    n = ids.size
    pos = np.arange(n, dtype=np.int64)
    order = np.lexsort((-pos if reverse else pos, ids))
    seg, starts, lengths = np.unique(ids[order], return_index=True, return_counts=True)
    bucket = np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64)
    index, segment = [], []
    for b in np.unique(bucket):
        pick = bucket == b
        s, ln = starts[pick], lengths[pick]
        width = int(ln.max())
        j = np.arange(width)
        inside = j < ln[:, None]
        at = np.minimum(s[:, None] + j, n - 1)
        index.append(np.where(inside, order[at], -1))
        segment.append(seg[pick])
    return SegmentRows(tuple(index), tuple(segment))


def gather_rows(a: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The rows of ``a`` (segments along axis 0, any trailing dimensions) that ``index``
    picks, one row per segment and trailing position: shape (rows * columns, width), zeros
    past each segment's end (after its last element, so no output of the segment reads them)."""
    cols = int(np.prod(a.shape[1:]))
    flat = a.reshape(a.shape[0], cols)
    got = flat[np.maximum(index, 0)]  # (rows, width, cols)
    got[index < 0] = 0
    return np.ascontiguousarray(np.moveaxis(got, 2, 1)).reshape(-1, index.shape[1])


def exact_segmented_scan(x: Any, kind: str, segments: Any, op: str = "add",
                         inclusive: bool = True, reverse: bool = False, *,
                         zeros: str = "either", nans: str = "propagate") -> np.ndarray:
    """The exact scan of every segment of ``x`` along axis 0 (1-D, or (T, H, ...) with every
    column segmented alike), each rounded once as if scanned alone: add, max or min, and
    integer products; ``segments`` a description of ``kind`` (:func:`segment_ids`).  An
    exclusive scan starts each segment at the identity; a reverse one scans each from its
    end."""
    a = np.asarray(x)
    if a.ndim == 0:
        raise ValueError("x must have at least one dimension, got a 0-D array")
    ids = segment_ids(kind, segments, a.shape[0])
    out = np.zeros_like(a)
    if a.size == 0:
        return out
    flat = out.reshape(a.shape[0], -1)
    cols = flat.shape[1]
    plan = segment_rows(ids, reverse)
    for index in plan.index:
        rows = exact_scan_axis(gather_rows(a, index), op, -1, inclusive, zeros=zeros, nans=nans)
        rows = np.moveaxis(rows.reshape(index.shape[0], cols, index.shape[1]), 1, 2)
        inside = index >= 0
        flat[index[inside]] = rows[inside]
    return out
