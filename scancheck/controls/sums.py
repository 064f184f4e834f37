"""Broken scans of sums over 1-D inputs (:mod:`scancheck.controls`), each with the spec it
declares: blocks and tiles carried wrongly, precision lost in a carry, sizes and calls that
break a scan, inputs written to, and the seed's three-kernel scan with its block-total bug.
Each is wrong in one way that one check of scancheck, and no weaker one, must catch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.dtypes import SIGNIFICAND_BITS
from ..core.operators import exclusive_of
from ..targets.spec import TargetSpec

BLOCK = 64


def tiles(x: np.ndarray, tile: int, ufunc: np.ufunc = np.add) -> np.ndarray:
    """Inclusive ``ufunc`` scans of each tile of ``tile`` elements, as a (tiles, tile) array
    (the last tile padded with the ufunc's identity)."""
    pad = np.full(-(-x.size // tile) * tile, ufunc.identity, dtype=x.dtype)
    pad[:x.size] = x
    return ufunc.accumulate(pad.reshape(-1, tile), axis=1, dtype=x.dtype)


def runs(x: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """The inclusive sum of each run of ``x`` that starts at a True of ``heads`` (element 0
    starts one whatever its flag), each run scanned alone, along axis 0."""
    out = np.empty_like(x)
    starts = [0, *(int(i) for i in np.flatnonzero(heads) if i > 0), x.shape[0]]
    for a, b in zip(starts, starts[1:]):
        if b > a:
            out[a:b] = np.add.accumulate(x[a:b], axis=0, dtype=x.dtype)
    return out


def blocked(x: np.ndarray, carries: Callable, block: int = BLOCK) -> np.ndarray:
    """Scan each block of ``block`` elements, then add the offset ``carries`` says came before
    it: ``carries(local, xs)``, of the last local prefix and the last input of every block but
    the last (arrays of x's dtype), is the offset of every block but the first."""
    # The blocks are scanned at once (each row in order, the bits of a scan per block), and
    # so are the carries where one ufunc's accumulate gives them (:func:`one_by_one` where
    # not): a Python loop of a few scalar operations per block took a quarter of the CPU
    # controls' checks (2**19 blocks of 2 at 2**20 elements).
    local = tiles(x, block)
    offsets = np.zeros(local.shape[0], dtype=x.dtype)
    offsets[1:] = carries(local[:-1, -1], x[block - 1::block][:local.shape[0] - 1])
    return (local + offsets[:, None]).ravel()[:x.size]


def one_by_one(carry_in: Callable) -> Callable:
    """The carries of :func:`blocked` one block after another: ``carry_in(offset, local, x,
    out)``, of a block's offset, last local prefix, input and output (scalars of x's dtype),
    is the next block's offset."""
    def carries(local: np.ndarray, xs: np.ndarray) -> np.ndarray:
        out = np.empty_like(local)
        offset = local.dtype.type(0)
        for k, (last, x_last) in enumerate(zip(local, xs)):
            offset = out[k] = carry_in(offset, last, x_last, last + offset)
        return out

    return carries


def running_offsets(local: np.ndarray, dtype: Any) -> np.ndarray:
    """Each block's offset the sum of the blocks before it, each partial sum rounded to
    ``dtype`` in order (``offset + local`` one block after another, from +0.0)."""
    return np.add.accumulate(np.r_[np.zeros(1, dtype), local.astype(dtype)], dtype=dtype)[1:]


def off_by_one_at_block_boundaries(x: np.ndarray) -> np.ndarray:
    """Each block's offset leaves out the previous block's last element."""
    with np.errstate(all="ignore"):
        return blocked(x, one_by_one(lambda off, local, xs, outs: outs - xs))


def dropped_partial_block(x: np.ndarray) -> np.ndarray:
    """n // BLOCK blocks instead of ceil(n / BLOCK): the last partial block never gets its offset."""
    with np.errstate(all="ignore"):
        out = np.add.accumulate(x, dtype=x.dtype)
        full = (x.size // BLOCK) * BLOCK
        if full and full < x.size:
            out[full:] = np.add.accumulate(x[full:], dtype=x.dtype)
        return out


def lower_precision_intermediate(x: np.ndarray) -> np.ndarray:
    """Block totals carried in float16: 11 significand bits, and overflow past 65504."""
    # The carry kept in float16 is the running float16 sum of the block totals rounded to
    # float16: each offset, a float16, is exact in the float32 and float64 it declares.
    with np.errstate(all="ignore"):
        return blocked(x, lambda local, xs: running_offsets(local, np.float16).astype(x.dtype))


def integers_accumulated_in_float32(x: np.ndarray) -> np.ndarray:
    """An integer sum that converts its input to float32 and accumulates there (a kernel
    templated on the float path), cast back: right while every prefix fits 24 bits."""
    with np.errstate(all="ignore"):
        return np.add.accumulate(x.astype(np.float32), dtype=np.float32).astype(x.dtype)


def round_to_bits(v: Any, bits: int) -> float:
    """The scalar ``v`` rounded to ``bits`` significand bits (to nearest, ties to even)."""
    # Python's floats, not NumPy's scalars: a carry is rounded once a block, 2048 times at
    # 2**20 elements, and each of NumPy's scalar calls costs microseconds.  round() gives no
    # -0.0, no infinity or NaN (they stay as they are), and ldexp() no overflow (to infinity).
    v = float(v)
    if v == 0 or not math.isfinite(v):
        return v
    m, e = math.frexp(v)
    try:
        return math.ldexp(round(m * 2.0**bits), e - bits)
    except OverflowError:
        return math.copysign(math.inf, v)


def carry_8_bits_short(x: np.ndarray) -> np.ndarray:
    """The carry between tiles of 512 kept in 8 significand bits fewer than the dtype has (16
    of float32's 24).  Each rounding errs by at most 2**(8-p) of the carry, half the
    any-order bound at the first carried output (512 roundings of 2**-p): only the exactness
    certificate sees it."""
    bits = SIGNIFICAND_BITS[x.dtype.name] - 8

    def carry(off, local, xs, outs):
        return x.dtype.type(round_to_bits(off + local, bits))

    with np.errstate(all="ignore"):
        return blocked(x, one_by_one(carry), block=512)


def compensated_sum_with_its_correction_flipped(x: np.ndarray) -> np.ndarray:
    """A compensated (Kahan) running sum that adds its correction where it should subtract
    it: each rounding counts twice.  On random data the doubled errors, of either sign, stay
    inside the any-order bound; where every addition rounds the same way they exceed it."""
    out = np.empty_like(x)
    s = c = x.dtype.type(0)
    with np.errstate(all="ignore"):
        for i, v in enumerate(x):
            y = v + c
            t = s + y
            c = (t - s) - y
            # A correction of inf - inf would spoil the NaN rules as well: this bug is the
            # rounding alone.
            c = c if np.isfinite(c) else x.dtype.type(0)
            s = out[i] = t
    return out


def block_sums_scanned_by_one_block(x: np.ndarray) -> np.ndarray:
    """Tiles of 256, whose sums one block of 1024 threads scans: the sums of tiles past 1024
    are never scanned and those tiles get no offset.  Right up to n = 262,144."""
    with np.errstate(all="ignore"):
        local = tiles(x, 256)
        sums = local[:1024, -1]
        offsets = np.zeros(local.shape[0], dtype=x.dtype)
        offsets[1:sums.size] = np.add.accumulate(sums, dtype=x.dtype)[:-1]
        return (local + offsets[:, None]).ravel()[:x.size]


def exclusive_scan_with_wrong_first_output(x: np.ndarray) -> np.ndarray:
    """An exclusive scan as a shifted inclusive one, with x[0] shifted in where the identity
    belongs: every output after the first is right."""
    with np.errstate(all="ignore"):
        inc = np.add.accumulate(x, dtype=x.dtype)
        return np.concatenate([x[:1], inc[:-1]])


def reverse_sum_leaving_out_its_first_input(x: np.ndarray) -> np.ndarray:
    """A reverse running sum whose loop stops one short (``for k in range(n - 1, 0, -1)``),
    then copies its total to output 0: that output leaves out x[0], every other is right."""
    with np.errstate(all="ignore"):
        out = np.add.accumulate(x[::-1], dtype=x.dtype)[::-1].copy()
        out[:1] = out[1:2] if x.shape[0] > 1 else 0
    return out


def scan_refusing_empty_input(x: np.ndarray) -> np.ndarray:
    """A correct scan that raises on an empty input instead of returning an empty scan."""
    if x.size == 0:
        raise ValueError("empty input")
    return np.cumsum(x, dtype=x.dtype)


def empty_input_refused_and_wrong_from_100(x: np.ndarray) -> np.ndarray:
    """Raises on an empty input, and from n = 100 adds 1 to every output from the 100th on
    (a second pass over tiles of 99 that counts one too many): two bugs, the first of which
    must not hide the second."""
    if x.size == 0:
        raise ValueError("empty input")
    with np.errstate(all="ignore"):
        out = np.add.accumulate(x, dtype=x.dtype)
        out[99:] += x.dtype.type(1)
    return out


#: What the allocator of :func:`quadratic_workspace` may hand out, in bytes.
WORKSPACE_LIMIT = 2**30


def quadratic_workspace(x: np.ndarray) -> np.ndarray:
    """A scan as the product of a lower-triangular matrix of ones with x, which asks its
    allocator (a pool of 1 GiB) for the n-by-n matrix: out of memory from n = 11,586 in
    float64 and 16,385 in 4-byte types, right below (the scan itself is taken directly:
    only the workspace request is the matrix's)."""
    need = x.size * x.size * x.itemsize
    if need > WORKSPACE_LIMIT:
        raise MemoryError(f"Unable to allocate {need / 2**30:.1f} GiB for an array with shape "
                          f"({x.size}, {x.size}) and data type {x.dtype}")
    with np.errstate(all="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


def tail_wrong_at_some_sizes(x: np.ndarray) -> np.ndarray:
    """A scan whose tail code path, taken only for n in [1000, 1010] and [3000, 3010] (a
    table of tile shapes with a wrong entry there), leaves the last element out of the last
    output: every other size is right, no tile edge among them."""
    with np.errstate(all="ignore"):
        out = np.add.accumulate(x, dtype=x.dtype)
        if 1000 <= x.size <= 1010 or 3000 <= x.size <= 3010:
            out[-1] = out[-2]
    return out


def tile_size_varying_between_runs(x: np.ndarray) -> np.ndarray:
    """A correct blocked scan whose tile size changes from run to run (as one picked from
    whatever the device has free would), so its float rounding does: declared deterministic,
    it is not.  Integers stay exact."""
    tile = int(np.random.default_rng().integers(2, 64))
    with np.errstate(all="ignore"):
        return blocked(x, lambda local, xs: running_offsets(local, x.dtype), block=tile)


#: The output buffers of :func:`varying_tiles_into_one_buffer`, one per shape and dtype.
_BUFFERS: dict[tuple[tuple[int, ...], str], np.ndarray] = {}


def varying_tiles_into_one_buffer(x: np.ndarray) -> np.ndarray:
    """:func:`tile_size_varying_between_runs` written into one buffer per shape and dtype,
    which every call returns (a cached workspace): two of its runs kept side by side are one
    array, the later run's bits, unless whoever keeps them copies each."""
    out = _BUFFERS.setdefault((x.shape, x.dtype.str), np.empty_like(x))
    out[...] = tile_size_varying_between_runs(x)
    return out


def stale_carry_now_and_then(x: np.ndarray) -> np.ndarray:
    """A blocked scan each of whose tiles after the first, with chance 1/32 on every call,
    adds the offset of the tile before its own (a carry read before its producer wrote it,
    as a missing barrier or fence lets happen): wrong in some runs of an input, right in
    others."""
    def carries(last: np.ndarray, _: np.ndarray) -> np.ndarray:
        offsets = np.add.accumulate(last, dtype=x.dtype)
        before = np.r_[np.zeros(1, x.dtype), offsets[:-1]]  # each tile's predecessor's
        return np.where(np.random.default_rng().random(offsets.size) < 1 / 32, before, offsets)

    with np.errstate(all="ignore"):
        return blocked(x, carries)


#: Whether :func:`wrong_on_its_first_call` has been called in this process.
_WARM: list[bool] = []


def wrong_on_its_first_call(x: np.ndarray) -> np.ndarray:
    """A scan whose first call in a process returns its output buffer unwritten (an
    asynchronous warm-up it does not wait for); every later call is right."""
    if not _WARM:
        _WARM.append(True)
        return np.full_like(x, 7)
    return np.add.accumulate(x, dtype=x.dtype)


def sum_from_the_smallest_normal(x: np.ndarray) -> np.ndarray:
    """A running sum started from the type's smallest normal number instead of 0 (FLT_MIN
    taken for the least float): every output off by it, which no rounding of a normal sum
    shows, and which tiny data show at n = 1."""
    start = np.array([np.finfo(x.dtype).tiny], dtype=x.dtype)
    with np.errstate(all="ignore"):
        return np.add.accumulate(np.concatenate([start, x]), dtype=x.dtype)[1:]


def least_integer_read_as_zero(x: np.ndarray) -> np.ndarray:
    """An integer scan that reads the type's least value as 0 (a sign-magnitude path: it has
    no magnitude); floats, and every other integer, are right."""
    if x.dtype.kind == "i":
        x = np.where(x == np.iinfo(x.dtype).min, x.dtype.type(0), x)
    with np.errstate(all="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


def sum_reset_at_negative_zero(x: np.ndarray) -> np.ndarray:
    """A running sum that starts again at each -0.0 (a reset read off a zero's sign bit):
    wrong where a -0.0 follows a nonzero prefix, right on the same input with each -0.0
    made +0.0, an equal value that no rounding or summation order tells apart."""
    with np.errstate(all="ignore"):
        return runs(x, (x == 0) & np.signbit(x))


def scan_gold(x: np.ndarray) -> np.ndarray:
    """The practical's CPU reference: an exclusive scan, a sequential loop in the input's type."""
    with np.errstate(over="ignore"):
        return exclusive_of(np.add.accumulate(x, dtype=x.dtype), x.dtype.type(0))


def multi_block_scan(x: np.ndarray, block: int, totals_from_exclusive: bool = False
                     ) -> np.ndarray:
    """The practical's three-kernel exclusive scan in float32: each block of ``block``
    elements scanned, its total written out, the totals scanned, and added back.  With
    ``totals_from_exclusive`` each block's total is read from its *exclusive* scan, which
    lacks the block's last element: the bug that reproduces the 2.1e6."""
    tiles = -(-x.size // block)
    pad = np.zeros(tiles * block, dtype=x.dtype)
    pad[:x.size] = x
    t = pad.reshape(tiles, block)
    with np.errstate(over="ignore"):
        incl = np.add.accumulate(t, axis=1, dtype=x.dtype)
        local = np.concatenate([np.zeros((tiles, 1), x.dtype), incl[:, :-1]], axis=1)
        totals = local[:, -1] if totals_from_exclusive else incl[:, -1]
        offsets = scan_gold(totals)
        return (local + offsets[:, None]).ravel()[:x.size]


def block_totals_from_the_exclusive_scan(x: np.ndarray) -> np.ndarray:
    """Seed 004's three-kernel exclusive scan (blocks of 128) with each block's total read
    from its exclusive scan, which lacks the block's last element: on the practical's data
    its RMS against scan_gold is 2.25e6, the figure the seed blamed on rounding."""
    return multi_block_scan(x, 128, totals_from_exclusive=True)


def sum_with_two_tile_bugs(x: np.ndarray) -> np.ndarray:
    """Two bugs in the path of a float sum for more than one tile of 64: every infinity it
    should return comes out NaN (a scaling step multiplies it by zero), and the last output
    leaves out its own element.  One tile is right."""
    out = np.cumsum(x, dtype=x.dtype)
    if x.shape[0] > 64:
        if x.dtype.kind == "f":
            out[np.isinf(out)] = np.nan
        out[-1] = out[-2]
    return out


def zeroing_its_input(x: np.ndarray) -> np.ndarray:
    """Zeroes the array it is handed and returns zeros: the right scan of what it left there,
    so an oracle that took the expected answer from the array after the call would pass it."""
    x[...] = 0
    return np.zeros_like(x)


def adding_one_to_its_last_input_and_output(x: np.ndarray) -> np.ndarray:
    """A correct scan that adds 1 to its last output and to its last input: the right scan of
    the input it leaves behind, wrong for the one it was given."""
    with np.errstate(all="ignore"):
        out = np.add.accumulate(x, dtype=x.dtype)
        if x.size:
            out[-1] += 1
            x[-1] += 1
    return out


def padded_tail_read_uninitialised(x: Any) -> Any:
    """CuPy: the input copied into a buffer padded to whole tiles of 256, and the whole
    buffer scanned.  The tail is never written; it only reaches outputs that are cut off,
    so every result is right -- only initcheck, with CuPy's pool off, sees the read."""
    import cupy as cp

    n = x.shape[0]
    padded = cp.empty(-(-n // 256) * 256, dtype=x.dtype)
    padded[:n] = x
    return cp.cumsum(padded, dtype=x.dtype)[:n]


_FLOATS = ("float32", "float64")

for fn, spec in (
    (off_by_one_at_block_boundaries, TargetSpec()),
    (dropped_partial_block, TargetSpec()),
    # Float dtypes only: the diagnosis "precision lost" must not need an integer run beside it.
    (lower_precision_intermediate, TargetSpec(dtypes=_FLOATS)),
    (carry_8_bits_short, TargetSpec(dtypes=_FLOATS)),
    (integers_accumulated_in_float32, TargetSpec(dtypes=("int32", "int64"))),
    # A loop of NumPy scalars: up to 2**14 elements, about 0.02 s a call.
    (compensated_sum_with_its_correction_flipped, TargetSpec(dtypes=_FLOATS, max_n=2**14)),
    (block_sums_scanned_by_one_block, TargetSpec()),
    (exclusive_scan_with_wrong_first_output, TargetSpec(inclusive=False)),
    (reverse_sum_leaving_out_its_first_input, TargetSpec(reverse=True)),
    (scan_refusing_empty_input, TargetSpec()),
    (empty_input_refused_and_wrong_from_100, TargetSpec()),
    (quadratic_workspace, TargetSpec()),
    (tail_wrong_at_some_sizes, TargetSpec()),
    (tile_size_varying_between_runs, TargetSpec()),
    (varying_tiles_into_one_buffer, TargetSpec()),
    (wrong_on_its_first_call, TargetSpec()),
    (stale_carry_now_and_then, TargetSpec()),
    (least_integer_read_as_zero, TargetSpec(dtypes=("int32", "int64", "float32"))),
    (sum_from_the_smallest_normal, TargetSpec(dtypes=_FLOATS)),
    (block_totals_from_the_exclusive_scan, TargetSpec(inclusive=False)),
    (zeroing_its_input, TargetSpec()),
    (adding_one_to_its_last_input_and_output, TargetSpec()),
    (padded_tail_read_uninitialised, TargetSpec(device="gpu", dtypes=("float32", "int32"),
                                                deterministic=False)),
):
    fn.scan_spec = spec  # type: ignore[attr-defined]
