"""Segmented scans past 2**31 elements: offsets x heads past 2**31 for int32 offsets.

Kernels over packed variable-length batches (cu_seqlens) address row ``bos`` of head ``h``
of a (T, H) input as ``bos * H + h``; with int32 offsets that product wraps once it passes
2**31 - 1, though every offset fits in 32 bits (the bug class of fla-core's chunk cumsum).
:func:`check_segments_large` hands a segmented target a (T, H) input of more than 2**31
elements (1-D: more than 2**31 rows, int64 offsets) whose segments start just before, at
and just after the row where ``bos * H`` reaches 2**31, with an empty segment there; its
data are step data (ones at a few marks, column by column), so every output is a small
count, exact in any dtype, and checked a chunk of rows at a time against a count of marks
(no scan of ours).  A wrong output that the same layout below 2**31 elements does not
show is an index overflow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..targets.target import Target
from .diagnosis import Cause, PropertyResult, Reason
from .large import STEP_DTYPES, one_at_a_time, out_of_memory, room, unlockable

#: The checks of segmented scans past 2**31, by name: the total elements each reaches.
SEGMENT_CHECKS: dict[str, int] = {"segments past 2**31": 2**31 + 17}
#: Where 32-bit signed indices wrap.
BOUNDARY = 2**31
#: The heads of a (T, H) target: rows of 4, so that ``bos * H`` reaches 2**31 at row 2**29.
HEADS = 4
#: Rows checked at a time (the expected counts of one chunk are a few arrays of its size).
_CHUNK = 1 << 22


@dataclass(frozen=True)
class SegmentCase:
    """A segmented input past ``boundary``: ``t`` rows of ``heads`` columns, the segments'
    ``offsets`` (an empty one among them), the rows holding marks, and their index dtype."""

    t: int
    heads: int
    offsets: np.ndarray
    marks: np.ndarray
    index_dtype: str
    boundary: int = BOUNDARY

    @property
    def first_past(self) -> int:
        """The first row whose ``row * heads`` reaches the boundary."""
        return -(-self.boundary // self.heads)

    def ones(self, mark: int) -> np.ndarray:
        """The columns holding a one in the ``mark``-th marked row: not all, so that a
        column read for another shows."""
        return np.array([h for h in range(self.heads) if (h + mark) % 3 != 2], np.int64)

    def data(self, dtype: str, xp: Any = np) -> Any:
        """The input: zeros, and ones at the marks (:meth:`ones`), of shape (t, heads), or
        (t,) for one head."""
        x = xp.zeros((self.t, self.heads), dtype=dtype)
        for i, m in enumerate(self.marks.tolist()):
            x[m, xp.asarray(self.ones(i))] = 1
        return x if self.heads > 1 else x.reshape(self.t)

    def description(self, kind: str) -> np.ndarray:
        """The segments as a target of ``kind`` is told them: offsets, head flags, or one
        key (group label) per row, the segment's number."""
        if kind == "offsets":
            return self.offsets.astype(self.index_dtype)
        lengths = np.diff(self.offsets)
        if kind == "flags":
            flags = np.zeros(self.t, bool)
            flags[self.offsets[:-1][lengths > 0]] = True
            flags[0] = True
            return flags
        return np.repeat(np.arange(lengths.size, dtype=np.int32), lengths)

    def want(self, lo: int, hi: int, inclusive: bool, reverse: bool, xp: Any = np) -> Any:
        """The right outputs of rows ``lo`` to ``hi``, shape (hi - lo, heads): per column,
        the marks of its segment before (or, reverse, after) each row, the row's own where
        ``inclusive``."""
        rows = xp.arange(lo, hi, dtype=xp.int64)
        off = xp.asarray(self.offsets)
        seg = xp.searchsorted(off, rows, side="right") - 1  # an empty segment: the last of equals
        start, end = off[seg], off[seg + 1]
        if reverse:
            a, b = rows + (0 if inclusive else 1), end
        else:
            a, b = start, rows + (1 if inclusive else 0)
        out = xp.zeros((hi - lo, self.heads), dtype=xp.int64)
        for h in range(self.heads):
            at = xp.asarray(np.array([m for i, m in enumerate(self.marks.tolist())
                                      if h in self.ones(i)], np.int64))
            out[:, h] = xp.searchsorted(at, b) - xp.searchsorted(at, a)
        return out

    def segment_of(self, row: int) -> tuple[int, int]:
        """The number and first row of the (non-empty) segment holding ``row``."""
        seg = int(np.searchsorted(self.offsets, row, side="right")) - 1
        return seg, int(self.offsets[seg])


def segment_case(total: int, heads: int, index_dtype: str, boundary: int = BOUNDARY
                 ) -> SegmentCase:
    """At least ``total`` elements in rows of ``heads``; segments that start at rows 0 and 5,
    in the middle, one before, at (twice: an empty segment) and one after the first row
    whose start times ``heads`` reaches ``boundary``; marks around each start and at the
    end."""
    t = -(-total // heads)
    b = -(-boundary // heads)
    starts = sorted({s for s in (0, 5, t // 2, b - 1, b, b + 1) if 0 <= s < t})
    if b < t:
        starts.insert(starts.index(b), b)  # an empty segment where the products wrap
    offsets = np.array([*starts, t], np.int64)
    marks = np.array(sorted({m for s in (0, 5, t // 2, b, t - 1) for m in (s - 2, s - 1, s,
                                                                          s + 1, s + 2)
                             if 0 <= m < t}), np.int64)
    return SegmentCase(t, heads, offsets, marks, index_dtype, boundary)


def _index_dtype(kind: str, one_d: bool) -> str | None:
    """The offsets' dtype the check hands a target of segments ``kind``: int32 where it takes
    them (past 2**31 only as offsets x heads); int64 where its rows must pass 2**31 (1-D)."""
    base, _, fixed = kind.partition(":")
    if base != "offsets":
        return "int32" if not one_d else "int64"
    if one_d:
        return None if fixed == "int32" else "int64"
    return fixed or "int32"


def _call(target: Target, x: Any, desc: np.ndarray) -> Any:
    """The target on ``x`` and ``desc`` (both where it runs), handed copies; a ValueError
    where it changed the description."""
    handed: Any = desc.copy()
    if target.spec.device == "gpu":
        import cupy as cp

        handed = cp.asarray(handed)
    fn = target.fn
    out = replace(target, fn=lambda a: fn(a, handed)).run(x)
    back = handed.get() if hasattr(handed, "get") else handed
    if not np.array_equal(back, desc):
        raise ValueError("the target wrote into its segment description")
    return out


def first_wrong(target: Target, case: SegmentCase, dtype: str, xp: Any = np
                ) -> tuple[int, int, Any, Any] | None:
    """Run the target on ``case``: None where every output is right, else the first wrong
    (row, column, got, expected)."""
    from ..core.arrays import array_module

    spec = target.spec
    x = case.data(dtype, xp)
    got = _call(target, x, case.description(spec.segments.partition(":")[0]))
    del x
    if xp is not np:
        from ..oracle.exact_device import as_device_array

        got = as_device_array(got)
    else:
        got = np.asarray(got)
    if got.shape[0] != case.t or got.size != case.t * case.heads:
        raise ValueError(f"returned shape {tuple(got.shape)} for an input of {case.t:,} rows "
                         f"of {case.heads}")
    got = got.reshape(case.t, case.heads)
    gp = array_module(got)
    for lo in range(0, case.t, _CHUNK):
        hi = min(case.t, lo + _CHUNK)
        want = case.want(lo, hi, spec.inclusive, bool(spec.reverse), gp)
        bad = got[lo:hi] != want
        if bool(bad.any()):
            r, h = (int(v) for v in np.unravel_index(int(gp.argmax(bad)), bad.shape))
            return lo + r, h, got[lo + r, h].item(), int(want[r, h])
    return None


def check_segments_large(target: Target, name: str = "segments past 2**31",
                         on_step: Callable[[int], None] | None = None,
                         boundary: int = BOUNDARY, total: int | None = None) -> PropertyResult:
    """The segmented check past ``boundary`` (module doc; ``total`` elements, by default the
    check's own): pass, skip (saying why: not segmented, no add scan of a 4- or 8-byte dtype,
    memory short), or a failure, an index overflow where the same layout below ``boundary``
    elements is right.  A smaller ``boundary`` is the same check at a size a test holds."""
    spec = target.spec
    if spec.segments is None:
        return PropertyResult(name, "skip", "the target is not segmented (its spec has no "
                              "segments)")
    dtype = next((d for d in STEP_DTYPES if d in spec.dtypes), None)
    if spec.family != "sum" or dtype is None:
        return PropertyResult(name, "skip", "needs a segmented add scan of a 4- or 8-byte "
                              "dtype")
    heads = 1 if spec.axis is None else HEADS
    index_dtype = _index_dtype(spec.segments, heads == 1)
    if index_dtype is None:
        return PropertyResult(name, "skip", "1-D with offsets:int32: int32 offsets cannot "
                              "address past 2**31 rows, and one head has no offsets x heads")
    case = segment_case(SEGMENT_CHECKS[name] if total is None else total, heads, index_dtype,
                        boundary)
    n = case.t * heads
    if spec.max_n is not None and spec.max_n < n:
        return PropertyResult(name, "skip", f"declared max_n={spec.max_n:,}")
    refused = unlockable()
    if refused:  # not a verdict on the target
        return PropertyResult(name, "skip", f"not run: {refused}")
    xp: Any = np
    if spec.device == "gpu":
        import cupy as xp
    detail: dict[str, Any] = {"n": n, "dtype": dtype, "rows": case.t, "heads": heads,
                              "index dtype": index_dtype}
    with one_at_a_time(target):
        short = room(target, n, dtype)
        if short:
            return PropertyResult(name, "skip", f"not run: {short}")
        if on_step is not None:
            on_step(n)
        try:
            wrong = first_wrong(target, case, dtype, xp)
        except Exception as exc:
            return out_of_memory(name, n, exc)
        if wrong is None:
            return PropertyResult(name, "pass", detail=detail)
        below = segment_case(boundary - 1, heads, index_dtype, boundary)
        if on_step is not None:
            on_step(below.t * heads)
        right_below = first_wrong(target, below, dtype, xp) is None
    return segment_verdict(name, case, dtype, wrong, right_below, detail)


def segment_verdict(name: str, case: SegmentCase, dtype: str, wrong: tuple[int, int, Any, Any],
                    right_below: bool, detail: dict[str, Any]) -> PropertyResult:
    """A wrong output told: its row, column and segment, the segment's start times the
    heads; an index overflow where the layout below 2**31 elements was right."""
    row, col, got, want = wrong
    seg, start = case.segment_of(row)
    product = start * case.heads
    where = (f"row {row:,}, column {col} (element {row * case.heads + col:,}), in segment "
             f"{seg} of {case.offsets.size - 1}, which starts at row {start:,}: start x heads "
             f"= {product:,}")
    smallest = {"shape": [case.t, case.heads] if case.heads > 1 else [case.t], "dtype": dtype,
                "offsets": case.offsets.tolist(), "index dtype": case.index_dtype,
                "data": f"ones at rows {case.marks.tolist()}", "index": row, "column": col,
                "got": got, "expected": want}
    past = "2**31" if case.boundary == BOUNDARY else f"{case.boundary:,}"
    if right_below:
        return PropertyResult(name, "fail", f"wrong at {where}; right on the same layout below "
                              f"{past} elements: an index past {past} (offsets x heads, "
                              f"bos * H, taken in 32 bits?)", smallest, detail,
                              cause=Cause.INDEX_OVERFLOW.name,
                              reason=Reason.WRONG_VALUE.name)
    return PropertyResult(name, "fail", f"wrong at {where}, and on the same layout below "
                          f"{past} elements too: an error of many rows, not of 32-bit indices",
                          smallest, detail, cause=Cause.LOGIC.name,
                          reason=Reason.WRONG_VALUE.name)
