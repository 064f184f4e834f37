"""Broken segmented scans (most ``segments='offsets'``): each wrong only at a seam of its
segments (an empty segment, a segment starting on a tile or chunk boundary, a reversed
description, an int32 index past 2**31), or reading its description as another kind."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..targets.spec import TargetSpec
from .sums import runs

#: The tile and chunk of the segmented controls: a segment starting on one is a seam.
SEG_TILE = 128
SEG_CHUNK = 64


def _heads(offsets: np.ndarray, n: int, keep: np.ndarray | None = None) -> np.ndarray:
    """Head flags at the starts of the segments ``offsets`` gives (those ``keep`` marks)."""
    heads = np.zeros(n, bool)
    starts = np.asarray(offsets[:-1], np.int64)
    live = (starts < n) & (np.diff(np.asarray(offsets, np.int64)) > 0)
    if keep is not None:
        live &= keep
    heads[starts[live]] = True
    return heads


def carry_not_reset_after_empty_segment(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The reset of a segment's start is a flag that an empty segment consumes: the segment
    after an empty one goes on from the segment before it."""
    lengths = np.diff(np.asarray(offsets, np.int64))
    after_empty = np.concatenate([[False], lengths[:-1] == 0])
    with np.errstate(all="ignore"):
        return runs(x, _heads(offsets, x.shape[0], ~after_empty))


def walk_stuck_at_an_empty_segment(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A sequential walk over the offsets that steps to the next one at most once an element
    (``if k == offsets[j]: j += 1``, where ``while`` is meant): at an empty segment (two equal
    offsets) it falls one behind for good, and no segment after it is reset."""
    off = np.asarray(offsets, np.int64)
    equal = np.flatnonzero(off[1:] == off[:-1])
    reset = off[:(equal[0] + 1 if equal.size else len(off))]
    heads = np.zeros(x.shape[0], bool)
    heads[reset[reset < x.shape[0]]] = True
    with np.errstate(all="ignore"):
        return runs(x, heads)


def reset_one_late_on_a_tile_boundary(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A segment that starts exactly on a tile of 128 is reset one element late: its first
    element is added to the previous segment's total."""
    heads = _heads(offsets, x.shape[0])
    on_tile = np.flatnonzero(heads)
    on_tile = on_tile[(on_tile % SEG_TILE == 0) & (on_tile > 0)]
    heads[on_tile] = False
    heads[on_tile[on_tile + 1 < x.shape[0]] + 1] = True
    with np.errstate(all="ignore"):
        return runs(x, heads)


def reverse_flipping_data_not_offsets(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A reverse segmented scan as the forward scan of the data flipped, the offsets not:
    right only where the segments are symmetric about the middle."""
    with np.errstate(all="ignore"):
        return runs(x[::-1], _heads(offsets, x.shape[0]))[::-1]


def chunked_dropping_carry_after_empty_last_segment(x: np.ndarray, offsets: np.ndarray
                                                    ) -> np.ndarray:
    """Chunks of 64 scanned alone, then each chunk's carry added to the segment that goes on
    into the next; the segment open at a chunk's end is looked up as the first of equal
    offsets, so where it is empty (an empty segment just before) the carry is dropped."""
    n = x.shape[0]
    off = np.asarray(offsets, np.int64)
    cuts = np.zeros(n, bool)
    cuts[::SEG_CHUNK] = True
    out = runs(x, _heads(offsets, n) | cuts)
    with np.errstate(all="ignore"):
        for end in range(SEG_CHUNK, n, SEG_CHUNK):
            last = int(np.searchsorted(off, end - 1, "right")) - 1  # its segment
            first = int(np.searchsorted(off, off[last], "left"))  # the bug: the first of equals
            if off[first + 1] > end:  # it goes on into the next chunk: carried
                stop = min(int(off[first + 1]), end + SEG_CHUNK)
                out[end:stop] = out[end:stop] + out[end - 1]
    return out


def infinity_plus_finite_as_nan(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A segmented sum whose running total, once infinite, turns NaN at the next finite value
    (a compensated sum subtracting inf from inf, as pandas' groupby().cumsum() does): every
    finite total is right."""
    heads = _heads(offsets, x.shape[0])
    with np.errstate(all="ignore"):
        out = runs(x, heads)
        turned = np.concatenate([[False], np.isinf(out[:-1]) & np.isfinite(x[1:])]) & ~heads
    out[runs(turned.astype(np.int64), heads) > 0] = np.nan  # NaN to its segment's end
    return out


def tile_varying_between_runs(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A segmented sum that scans each segment in tiles whose size changes from run to run,
    each tile's total carried on in order: each run right within the bound, its rounding not
    the same twice."""
    from .sums import running_offsets, tiles

    tile = int(np.random.default_rng().integers(2, 64))
    out = np.empty_like(x)
    off = np.asarray(offsets, np.int64)
    with np.errstate(all="ignore"):
        for lo, hi in zip(off[:-1], off[1:]):
            if hi > lo:
                local = tiles(x[lo:hi], tile)
                carry = np.r_[np.zeros(1, x.dtype), running_offsets(local[:-1, -1], x.dtype)]
                out[lo:hi] = (local + carry[:, None]).ravel()[:hi - lo]
    return out


def strides_ignored_along_segments(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A (T, H, ...) segmented sum that reads its input as if it were C-contiguous from its
    data pointer (a kernel indexing ``t * H + h``): right on C-contiguous input only."""
    from .rows import read_as_c_contiguous

    with np.errstate(all="ignore"):
        return runs(read_as_c_contiguous(x), _heads(offsets, x.shape[0]))


def heads_past_the_first_tile_never_reset(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A (T, H, ...) segmented sum that takes its heads in tiles of 8 and resets at segment
    starts in the first tile only: every head past the eighth runs on across segments."""
    flat = x.reshape(x.shape[0], int(np.prod(x.shape[1:], dtype=np.int64)))
    out = np.empty_like(flat)
    with np.errstate(all="ignore"):
        out[:, :8] = runs(flat[:, :8], _heads(offsets, x.shape[0]))
        out[:, 8:] = np.add.accumulate(flat[:, 8:], axis=0, dtype=x.dtype)
    return out.reshape(x.shape)


def offsets_where_flags_are_declared(x: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """A right segmented sum that takes its segments as offsets, declared to take head flags:
    a flag array read as offsets names no segments that flags name."""
    return runs(x, _heads(np.asarray(flags, np.int64), x.shape[0]))


def offsets_as_indices_where_flags_are_declared(x: np.ndarray, offsets: np.ndarray
                                                ) -> np.ndarray:
    """A right segmented sum that indexes its head flags by its offsets, declared to take
    head flags: a flag array used as indices raises (an IndexError, of a bool index of
    another length)."""
    heads = np.zeros(x.shape[0], dtype=bool)
    starts = np.asarray(offsets)[:-1]
    heads[starts[starts < x.shape[0]]] = True
    with np.errstate(all="ignore"):
        return runs(x, heads)


def keys_narrowed_to_int8(x: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """A by-key sum (a segment ends where the key changes) that narrows its keys to int8
    first: keys that differ only past their low 8 bits become one segment."""
    narrow = np.asarray(keys).astype(np.int8)
    heads = np.r_[True, narrow[1:] != narrow[:-1]] if narrow.size else np.zeros(0, bool)
    with np.errstate(all="ignore"):
        return runs(x, heads)


def group_labels_narrowed_to_int32(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """A groups scan (each element's running sum over the earlier elements of its label)
    that narrows its labels to int32 first: labels that differ only past their low 32 bits
    become one group.  Integers only (their sums wrap exactly)."""
    narrow = np.asarray(labels).astype(np.int32)
    order = np.argsort(narrow, kind="stable")
    ranked = narrow[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    with np.errstate(all="ignore"):
        sums = np.add.accumulate(x[order], dtype=x.dtype)
        before = np.r_[x.dtype.type(0), sums[:-1]][starts]  # the sum ahead of each group
        out = np.empty_like(x)
        out[order] = sums - np.repeat(before, np.diff(np.r_[starts, x.size]))
    return out


def groups_after_an_unstable_sort(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """A groups sum that orders the elements by label with an unstable sort (heapsort) and
    scans each group in that order: right where no group's elements come out of the sort
    reordered.  Integers only: a float group summed in another order stays within its
    rounding bound."""
    order = np.argsort(np.asarray(labels), kind="heapsort")
    ranked = np.asarray(labels)[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    with np.errstate(all="ignore"):
        sums = np.add.accumulate(x[order], dtype=x.dtype)
        before = np.r_[x.dtype.type(0), sums[:-1]][starts]
        out = np.empty_like(x)
        out[order] = sums - np.repeat(before, np.diff(np.r_[starts, x.size]))
    return out


def offsets_times_heads_in_32_bits(x: Any, offsets: Any) -> Any:
    """NumPy or CuPy: a (T, H) segmented scan that addresses segment starts as ``bos * H``
    in int32, as kernels given int32 cu_seqlens do: right until some start times H reaches
    2**31, then reading the rows at the wrapped address (modulo the array).  Only a check
    past 2**31 elements can show it: every offset still fits in 32 bits."""
    return starts_times_heads_wrapping(x, offsets, 2**31)


def starts_times_heads_wrapping(x: Any, offsets: Any, limit: int) -> Any:
    """The segmented scan of :func:`offsets_times_heads_in_32_bits`, its products ``bos * H``
    wrapping into [-limit, limit) as signed integers of that many values do (``limit`` 2**31:
    int32).  Vectorized (a log-depth scan within segments), so that it answers at once at
    the sizes a GPU target is searched to; a wrapped segment alone is read elsewhere."""
    from ..core.arrays import array_module, to_numpy

    xp = array_module(x)
    t = x.shape[0]
    heads = int(np.prod(x.shape[1:], dtype=np.int64))
    flat = x.reshape(t, heads)
    off = to_numpy(offsets).astype(np.int64)
    lengths = np.diff(off)
    ids = xp.asarray(np.repeat(np.arange(lengths.size), lengths))
    out = flat.copy()
    d = 1
    while d < t:  # Hillis-Steele within segments: add the partial sum d rows up, same segment
        same = (ids[d:] == ids[:-d])[:, None]
        out[d:] = out[d:] + xp.where(same, out[:-d], xp.zeros((), dtype=x.dtype))
        d *= 2
    bos = (off * heads + limit) % (2 * limit) - limit  # two's complement wrap
    for i in np.flatnonzero((bos[:-1] != off[:-1] * heads) & (lengths > 0)):
        lo, hi = int(off[i]), int(off[i + 1])
        # The wrapped address, as the kernel would read it (modulo the array).
        first = int(bos[i] % (t * heads)) // heads
        out[lo:hi] = xp.cumsum(flat[(first + xp.arange(hi - lo)) % t], axis=0, dtype=x.dtype)
    return out.reshape(x.shape)


_SEG = TargetSpec(segments="offsets", dtypes=("int32", "float32", "float64"))
for fn, spec in (
    (carry_not_reset_after_empty_segment, _SEG),
    (walk_stuck_at_an_empty_segment, _SEG),
    (reset_one_late_on_a_tile_boundary, _SEG),
    (reverse_flipping_data_not_offsets, TargetSpec(segments="offsets", reverse=True,
                                                   dtypes=_SEG.dtypes)),
    (chunked_dropping_carry_after_empty_last_segment, _SEG),
    (tile_varying_between_runs, _SEG),
    (infinity_plus_finite_as_nan, TargetSpec(segments="offsets", dtypes=("float32", "float64"))),
    (strides_ignored_along_segments, TargetSpec(segments="offsets", axis=0,
                                                dtypes=_SEG.dtypes)),
    (heads_past_the_first_tile_never_reset, TargetSpec(segments="offsets", axis=0,
                                                       dtypes=_SEG.dtypes)),
    (group_labels_narrowed_to_int32, TargetSpec(segments="groups", dtypes=("int32", "int64"))),
    (keys_narrowed_to_int8, TargetSpec(segments="keys", dtypes=_SEG.dtypes)),
    (groups_after_an_unstable_sort, TargetSpec(segments="groups", dtypes=("int32", "int64"))),
    (offsets_where_flags_are_declared, TargetSpec(segments="flags", dtypes=_SEG.dtypes)),
    (offsets_as_indices_where_flags_are_declared, TargetSpec(segments="flags",
                                                             dtypes=_SEG.dtypes)),
    (offsets_times_heads_in_32_bits, TargetSpec(segments="offsets", axis=0,
                                                dtypes=_SEG.dtypes)),
):
    fn.scan_spec = spec  # type: ignore[attr-defined]
