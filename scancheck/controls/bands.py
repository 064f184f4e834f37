"""Broken scans whose bug only a narrow band of sizes shows, each of which one contract
(a NaN rule, a promotion, subnormals read as zero, checked overflow, a reverse convention)
may seem to explain on some case; and scans that give no answer in time: two slow (one whose
calls' times predict it, one whose memory grows meanwhile), two hung (one of them after
taking its buffers) and one that kills its process.  Each must be told
what it is, whichever property meets it first (:mod:`scancheck.controls`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..core.dtypes import is_float
from ..targets.spec import TargetSpec

#: The block of the blocked scans below.
BLOCK = 64
#: Sizes past this, of residue ODD modulo BLOCK, take the broken path: 1/64 of the sizes
#: past 5000, no tile edge 2**k - 1, 2**k or 2**k + 1 among them.
FROM, ODD = 5000, 7


def in_the_band(n: int) -> bool:
    """Whether the blocked scans below take their broken path at ``n`` elements."""
    return n > FROM and n % BLOCK == ODD


def _blocked(x: np.ndarray, keep_last: bool = True, guard: float | None = None) -> np.ndarray:
    """A two-level inclusive sum of ``x`` in blocks of :data:`BLOCK`: each block scanned, and
    the running sum of the blocks' totals added to the blocks after them; the last block's
    offset left out unless ``keep_last``; totals below ``guard`` in magnitude read as zero."""
    n = x.size
    if n == 0:
        return x.copy()
    with np.errstate(all="ignore"):
        pad = np.zeros(-(-n // BLOCK) * BLOCK, dtype=x.dtype)
        pad[:n] = x
        local = np.add.accumulate(pad.reshape(-1, BLOCK), axis=1, dtype=x.dtype)
        totals = local[:-1, -1]
        if guard is not None:
            totals = np.where(np.abs(totals) < guard, x.dtype.type(0), totals)
        offsets = np.zeros(local.shape[0], dtype=x.dtype)
        offsets[1:] = np.add.accumulate(totals, dtype=x.dtype)
        if not keep_last:
            offsets[-1] = 0
        return (local + offsets[:, None]).ravel()[:n]


def blocked_sum_losing_its_last_offset(x: np.ndarray) -> np.ndarray:
    """A two-level blocked sum (blocks of 64) whose last block gets no offset where n > 5000
    and n % 64 == 7: a plain logic error in 1/64 of the sizes past 5000.  On data with NaN,
    at such a size, the outputs it leaves can fit a NaN rule (skipping NaN) by chance."""
    return _blocked(x, keep_last=not in_the_band(x.size))


def dtype_widened_at_some_sizes(x: np.ndarray) -> np.ndarray:
    """A float32 sum that returns float64 where n > 5000 and n % 64 == 7 (a second code path
    that accumulates and stores in float64) and float32 elsewhere: right values, but no
    promotion, which would hold at every size."""
    with np.errstate(all="ignore"):
        if x.dtype == np.float32 and in_the_band(x.size):
            return np.add.accumulate(x, dtype=np.float64)
        return np.add.accumulate(x, dtype=x.dtype)


def _suffix(elems: tuple, combine: Any) -> tuple:
    """The reverse scan in the 'suffix' convention, out[k] = x[k] + ... + x[n-1] in the
    elements' order, by a vectorised Brent-Kung network over the flipped leaves."""
    from ..kernels.generic_scans import brent_kung

    flipped = brent_kung(tuple(v[::-1] for v in elems), lambda a, b: combine(b, a))
    return tuple(np.ascontiguousarray(v[::-1]) for v in flipped)


def reverse_flipped_at_some_sizes(elems: tuple, combine: Any) -> tuple:
    """A reverse scan declared reverse='suffix' (out[k] = x[k] + ... + x[n-1]) that takes a
    second code path where n > 5000 and n % 64 == 7, computing flip(scan(flip(x))): the
    elements combined later-first.  At those sizes every output fits reverse='flip', but no
    convention that holds at one size only is one: a logic error in a band of sizes."""
    from ..kernels.generic_scans import brent_kung

    if not in_the_band(elems[0].shape[0]):
        return _suffix(elems, combine)
    flipped = brent_kung(tuple(v[::-1] for v in elems), combine)
    return tuple(np.ascontiguousarray(v[::-1]) for v in flipped)


def sum_reading_nan_as_zero_at_some_sizes(x: np.ndarray) -> np.ndarray:
    """A sum whose last, partial tile of 64 reads NaN as zero where n > 5000 and n % 64 == 7:
    seven elements of 1/64 of the sizes, where a NaN shows only if no special comes before
    it.  On the sizes around, NaN propagates as IEEE arithmetic says; every float type
    takes the broken path, bfloat16 (NumPy kind 'V') too."""
    with np.errstate(all="ignore"):
        if is_float(x.dtype) and in_the_band(x.size):
            x = x.copy()
            tail = x[x.size - x.size % BLOCK:]
            tail[np.isnan(tail)] = 0
        return np.add.accumulate(x, dtype=x.dtype)


def sum_raising_on_overflow_at_some_sizes(x: np.ndarray) -> np.ndarray:
    """An integer sum declared to wrap (two's complement, the default) that takes a checked
    code path where n > 5000 and n % 64 == 7, raising OverflowError where a prefix leaves
    the type: a checked sum at those sizes, which overflow='raise' would declare, but not at
    the others, where it wraps."""
    if x.dtype.kind in "iu" and in_the_band(x.size):
        info = np.iinfo(x.dtype)
        exact = np.cumsum(x.astype(object)) if x.dtype.itemsize == 8 else np.cumsum(
            x.astype(np.int64))
        if any(not int(info.min) <= int(v) <= int(info.max) for v in exact):
            raise OverflowError(f"a prefix leaves {x.dtype}")
    with np.errstate(over="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


#: Block totals smaller than this are read as zero by :func:`underflow_guard_too_high`.
GUARD = 1e-18


def underflow_guard_too_high(x: np.ndarray) -> np.ndarray:
    """A blocked sum that reads each block total below 1e-18 in magnitude as zero (an
    underflow guard set far above the subnormals): on data around the smallest normal
    number it looks like reading subnormals as zero, but the totals it drops are normal
    numbers, and the same data scaled by a power of two that leaves no subnormal are
    still wrong."""
    return _blocked(x, guard=GUARD)


#: Seconds a call of :func:`slow_but_right` takes at 2**19 elements: 4 times that at 2**20.
SLOW_AT_2_19 = 0.5


def slow_but_right(x: np.ndarray) -> np.ndarray:
    """A right sum whose calls take (n / 2**19)**2 / 2 seconds (an algorithm quadratic in
    n): an eighth of a second at 2**18 elements, half a second at 2**19, two at 2**20.  Past
    a timeout of one second it is slow, not hung: its calls at n/2 and n/4 predict it."""
    time.sleep(SLOW_AT_2_19 * (x.size / 2**19) ** 2)
    with np.errstate(all="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


#: Sizes from which :func:`hung_past_some_size` never returns.
HANG_FROM = 3000


def hung_past_some_size(x: np.ndarray) -> np.ndarray:
    """A sum that waits forever from 3000 elements on (a worker that never signals), and
    answers at once, rightly, below: a hang, however long the timeout."""
    while x.size >= HANG_FROM:
        time.sleep(1.0)
    with np.errstate(all="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


#: Sizes from which :func:`aborting_past_some_size` kills its process.
ABORT_FROM = 5001


def aborting_past_some_size(x: np.ndarray) -> np.ndarray:
    """A sum that kills its process from 5001 elements on (a native library's abort), and
    answers rightly below: each property meets the death at the first size of its own past
    5000, none of them at 5001 itself."""
    import os

    if x.size >= ABORT_FROM:
        os.abort()
    with np.errstate(all="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


#: Sizes from which :func:`allocating_but_right` keeps buffers as it goes.
ALLOCATE_FROM = 3000


def allocating_but_right(x: np.ndarray) -> np.ndarray:
    """A right sum that from 3000 elements on keeps an 8 MiB buffer every 20 ms for three
    seconds before it answers (a worker that stages as it goes), and answers at once below:
    past a timeout of one second its memory has grown by some 400 MiB while the calls before
    took microseconds, so no growth of their times predicts it.  Slow, not hung."""
    if x.size >= ALLOCATE_FROM:
        kept, end = [], time.monotonic() + 3.0
        while time.monotonic() < end:
            kept.append(np.ones(2**20))  # written, so resident
            time.sleep(0.02)
    with np.errstate(all="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


def hung_after_allocating(x: np.ndarray) -> np.ndarray:
    """A sum that from 3000 elements on takes 256 MiB of buffers at once, then waits forever
    (a worker that never signals), and answers at once, rightly, below: its memory grew in
    the call, but not as it was killed, so a hang, not a call that allocates as it goes."""
    if x.size >= ALLOCATE_FROM:
        kept = np.ones(2**25)  # written, so resident
        while kept.size:
            time.sleep(1.0)
    with np.errstate(all="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


for fn, spec in (
    (blocked_sum_losing_its_last_offset, TargetSpec()),
    (dtype_widened_at_some_sizes, TargetSpec(dtypes=("float32",))),
    (underflow_guard_too_high, TargetSpec(dtypes=("float32", "float64"))),
    (slow_but_right, TargetSpec(dtypes=("float32",))),
    (hung_past_some_size, TargetSpec(dtypes=("float32",))),
    (aborting_past_some_size, TargetSpec()),
    (allocating_but_right, TargetSpec(dtypes=("float32",))),
    (hung_after_allocating, TargetSpec(dtypes=("float32",))),
    (sum_raising_on_overflow_at_some_sizes, TargetSpec(dtypes=("int32", "int64"))),
    (reverse_flipped_at_some_sizes, TargetSpec(combine=True, reverse="suffix")),
):
    fn.scan_spec = spec  # type: ignore[attr-defined]
