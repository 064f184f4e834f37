"""The broken scans of the negative controls (:mod:`scancheck.controls`), each with the spec
it declares: NumPy functions, and the CuPy ones of the GPU rows.  Each is wrong in one way
that one check of scancheck, and no weaker one, must catch.
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


def _tiles(x: np.ndarray, tile: int, ufunc: np.ufunc = np.add) -> np.ndarray:
    """Inclusive ``ufunc`` scans of each tile of ``tile`` elements, as a (tiles, tile) array
    (the last tile padded with the ufunc's identity)."""
    pad = np.full(-(-x.size // tile) * tile, ufunc.identity, dtype=x.dtype)
    pad[:x.size] = x
    return ufunc.accumulate(pad.reshape(-1, tile), axis=1, dtype=x.dtype)


def _blocked(x: np.ndarray, carries: Callable, block: int = BLOCK) -> np.ndarray:
    """Scan each block of ``block`` elements, then add the offset ``carries`` says came before
    it: ``carries(local, xs)``, of the last local prefix and the last input of every block but
    the last (arrays of x's dtype), is the offset of every block but the first."""
    # The blocks are scanned at once (each row in order, the bits of a scan per block), and
    # so are the carries where one ufunc's accumulate gives them (:func:`_one_by_one` where
    # not): a Python loop of a few scalar operations per block took a quarter of the CPU
    # controls' checks (2**19 blocks of 2 at 2**20 elements).
    local = _tiles(x, block)
    offsets = np.zeros(local.shape[0], dtype=x.dtype)
    offsets[1:] = carries(local[:-1, -1], x[block - 1::block][:local.shape[0] - 1])
    return (local + offsets[:, None]).ravel()[:x.size]


def _one_by_one(carry_in: Callable) -> Callable:
    """The carries of :func:`_blocked` one block after another: ``carry_in(offset, local, x,
    out)``, of a block's offset, last local prefix, input and output (scalars of x's dtype),
    is the next block's offset."""
    def carries(local: np.ndarray, xs: np.ndarray) -> np.ndarray:
        out = np.empty_like(local)
        offset = local.dtype.type(0)
        for k, (last, x_last) in enumerate(zip(local, xs)):
            offset = out[k] = carry_in(offset, last, x_last, last + offset)
        return out

    return carries


def _running(local: np.ndarray, dtype: Any) -> np.ndarray:
    """Each block's offset the sum of the blocks before it, each partial sum rounded to
    ``dtype`` in order (``offset + local`` one block after another, from +0.0)."""
    return np.add.accumulate(np.r_[np.zeros(1, dtype), local.astype(dtype)], dtype=dtype)[1:]


def off_by_one_at_block_boundaries(x: np.ndarray) -> np.ndarray:
    """Each block's offset leaves out the previous block's last element."""
    with np.errstate(all="ignore"):
        return _blocked(x, _one_by_one(lambda off, local, xs, outs: outs - xs))


def dropped_partial_block(x: np.ndarray) -> np.ndarray:
    """n // BLOCK blocks instead of ceil(n / BLOCK): the last partial block never gets its offset."""
    with np.errstate(all="ignore"):
        out = np.add.accumulate(x, dtype=x.dtype)
        full = (x.size // BLOCK) * BLOCK
        if full and full < x.size:
            out[full:] = np.add.accumulate(x[full:], dtype=x.dtype)
        return out


def block_sums_in_the_wrong_order(x: np.ndarray) -> np.ndarray:
    """Recurrence pairs: each block's carry is combined on the wrong side (fine for add)."""
    from ..core.operators import get_operator

    op = get_operator("recurrence")
    n = x.shape[0]
    identity = np.asarray(op.identity(x.dtype.name), dtype=x.dtype)
    # Every block at once, a step at a time (the identity pads the last): a scalar loop took
    # 26 s at 2**20 pairs, and 'deterministic' runs it four times a case.
    pad = np.empty((-(-n // BLOCK) * BLOCK, 2), dtype=x.dtype)
    pad[:n], pad[n:] = x, identity
    blocks = pad.reshape(-1, BLOCK, 2)
    local = np.empty_like(blocks)
    acc = np.broadcast_to(identity, (blocks.shape[0], 2))
    for k in range(BLOCK):
        acc = local[:, k] = op.combine(acc, blocks[:, k])
    carries = np.empty((blocks.shape[0], 2), dtype=x.dtype)
    carry = identity
    for j in range(blocks.shape[0]):
        carries[j] = carry
        carry = op.combine(local[j, -1], carry)
    return op.combine(local, carries[:, None]).reshape(-1, 2)[:n]  # should be (carry, acc)


def long_blocks_in_the_wrong_order(x: np.ndarray) -> np.ndarray:
    """Recurrence pairs in blocks of 1024, each scanned right (by doubling, vectorised),
    each block's carry combined on the wrong side: wrong only from n = 1025, past the
    reach of exact rationals."""
    from ..core.operators import get_operator

    op = get_operator("recurrence")
    block, n = 1024, x.shape[0]
    identity = np.array(op.identity(x.dtype.name), dtype=x.dtype)
    # Every block's doubling at once (an output reads only the pairs before it, so the
    # identity padding the last block reaches none of its outputs).
    pad = np.empty((-(-n // block), block, 2), dtype=x.dtype)
    pad.reshape(-1, 2)[:n], pad.reshape(-1, 2)[n:] = x, identity
    local = np.moveaxis(_pair_scan(np.moveaxis(pad, 1, 0)), 0, 1)
    out = np.empty_like(local)
    with np.errstate(all="ignore"):
        carry = identity
        for j in range(local.shape[0]):
            out[j] = op.combine(local[j], carry)  # should be combine(carry, local)
            carry = out[j, -1]
    return out.reshape(-1, 2)[:n]


def _pair_scan(x: np.ndarray) -> np.ndarray:
    """The recurrence pairs' inclusive scan by doubling along axis 0 (right, vectorised)."""
    from ..core.operators import get_operator

    op = get_operator("recurrence")
    out = x.copy()
    with np.errstate(all="ignore"):
        d = 1
        while d < out.shape[0]:
            out[d:] = op.combine(out[:-d], out[d:])
            d *= 2
    return out


def recurrence_leaving_its_a_unscanned(x: np.ndarray) -> np.ndarray:
    """Recurrence pairs whose y_k are right and whose first elements are each pair's own a,
    not the running product of the a's (a chunked kernel that never carries it)."""
    out = _pair_scan(x)
    out[:, 0] = x[:, 0]
    return out


def recurrence_products_lost_past_64(x: np.ndarray) -> np.ndarray:
    """Integer recurrence pairs whose running products of the a's read 0 past 64 pairs (a
    carry of the products never written): right while the products of even a's have
    wrapped to 0 anyway."""
    with np.errstate(all="ignore"):
        out = _pair_scan(x)
    out[64:, 0] = 0
    return out


def recurrence_dividing_by_the_running_product(x: np.ndarray) -> np.ndarray:
    """Recurrence pairs in chunks of 16, each chunk's y as A_k * cumsum(b / A) with A the
    chunk's running product of the a's (chunked linear attention's trick), the chunks'
    carries scanned after: right within the bound until some a is zero, then NaN."""
    n, chunk = x.shape[0], 16
    pad = np.empty((-(-n // chunk) * chunk, 2), dtype=x.dtype)
    pad[:n], pad[n:] = x, (1, 0)
    a, b = pad[:, 0].reshape(-1, chunk), pad[:, 1].reshape(-1, chunk)
    with np.errstate(all="ignore"):
        prod = np.multiply.accumulate(a, axis=1, dtype=x.dtype)
        local = prod * np.add.accumulate(b / prod, axis=1, dtype=x.dtype)
        ends = _pair_scan(np.stack([prod[:, -1], local[:, -1]], axis=-1))
        carry = np.r_[np.array([(1, 0)], x.dtype), ends[:-1]]
        out = np.stack([prod * carry[:, :1], local + prod * carry[:, 1:]], axis=-1)
    return out.reshape(-1, 2)[:n]


def lower_precision_intermediate(x: np.ndarray) -> np.ndarray:
    """Block totals carried in float16: 11 significand bits, and overflow past 65504."""
    # The carry kept in float16 is the running float16 sum of the block totals rounded to
    # float16: each offset, a float16, is exact in the float32 and float64 it declares.
    with np.errstate(all="ignore"):
        return _blocked(x, lambda local, xs: _running(local, np.float16).astype(x.dtype))


def _round_to_bits(v: Any, bits: int) -> float:
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
        return x.dtype.type(_round_to_bits(off + local, bits))

    with np.errstate(all="ignore"):
        return _blocked(x, _one_by_one(carry), block=512)


def block_sums_scanned_by_one_block(x: np.ndarray) -> np.ndarray:
    """Tiles of 256, whose sums one block of 1024 threads scans: the sums of tiles past 1024
    are never scanned and those tiles get no offset.  Right up to n = 262,144."""
    with np.errstate(all="ignore"):
        local = _tiles(x, 256)
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


def scan_refusing_empty_input(x: np.ndarray) -> np.ndarray:
    """A correct scan that raises on an empty input instead of returning an empty scan."""
    if x.size == 0:
        raise ValueError("empty input")
    return np.cumsum(x, dtype=x.dtype)


def empty_input_refused_and_wrong_from_100(x: np.ndarray) -> np.ndarray:
    """Raises on an empty input, and from n = 100 adds 1 to every output from the 100th on
    (a second pass over tiles of 99 that counts one too many): two bugs, the first of which
    used to hide the second."""
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
        return _blocked(x, lambda local, xs: _running(local, x.dtype), block=tile)


#: The output buffers of :func:`varying_tiles_into_one_buffer`, one per shape and dtype.
_BUFFERS: dict[tuple[tuple[int, ...], str], np.ndarray] = {}


def varying_tiles_into_one_buffer(x: np.ndarray) -> np.ndarray:
    """:func:`tile_size_varying_between_runs` written into one buffer per shape and dtype,
    which every call returns (a cached workspace): two of its runs kept side by side are one
    array, the later run's bits, unless whoever keeps them copies each."""
    out = _BUFFERS.setdefault((x.shape, x.dtype.str), np.empty_like(x))
    out[...] = tile_size_varying_between_runs(x)
    return out


def cumprod_tile_varying_between_runs(x: np.ndarray) -> np.ndarray:
    """A blocked cumprod whose tile size changes from run to run: each run within the
    products' bound, its rounding not the same twice."""
    tile = int(np.random.default_rng().integers(2, 64))
    with np.errstate(all="ignore"):
        local = _tiles(x, tile, np.multiply)
        carries = np.multiply.accumulate(np.r_[np.ones(1, x.dtype), local[:-1, -1]],
                                         dtype=x.dtype)
        return (local * carries[:, None]).ravel()[:x.size]


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


def strides_ignored(x: np.ndarray, axis: int) -> np.ndarray:
    """An N-D scan along ``axis`` that reads its input as if it were C-contiguous from its
    data pointer (a kernel indexing ``row * n + i``): right on C-contiguous arrays, wrong on
    transposed, strided, reversed and Fortran-order views."""
    with np.errstate(all="ignore"):
        return np.cumsum(_read_as_c_contiguous(x), axis=axis, dtype=x.dtype)


def reverse_strides_ignored(x: np.ndarray, axis: int) -> np.ndarray:
    """:func:`strides_ignored` as a reverse scan (each output the sum from it to the row's
    end): right on C-contiguous arrays only."""
    misread = np.flip(_read_as_c_contiguous(x), axis)
    with np.errstate(all="ignore"):
        return np.flip(np.cumsum(misread, axis=axis, dtype=x.dtype), axis)


def _read_as_c_contiguous(x: np.ndarray) -> np.ndarray:
    """What a kernel indexing ``row * n + i`` from ``x``'s data pointer reads: ``x`` itself
    where it is C-contiguous."""
    if x.size == 0 or x.flags.c_contiguous:
        return x
    root = x
    while True:
        base = root.base
        if not isinstance(base, np.ndarray):  # as_strided's wrapper holds the array it views
            base = getattr(base, "base", None)
        if not isinstance(base, np.ndarray):
            break
        root = base
    memory = root.ravel(order="K")  # a contiguous root: its memory, in memory order
    start = (x.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // x.itemsize
    # Past the end of the buffer a kernel would read whatever lies there: here, its start.
    return memory[(start + np.arange(x.size)) % memory.size].reshape(x.shape)


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


def product_carried_in_8_bits(x: np.ndarray) -> np.ndarray:
    """A blocked cumprod (tiles of 256) whose carry between tiles keeps 8 significand bits,
    bfloat16's: a mixed-precision carry.  Factors whose products are powers of two pass."""
    out = np.empty_like(x)
    carry = 1.0
    with np.errstate(all="ignore"):
        for lo in range(0, x.shape[0], 256):
            out[lo:lo + 256] = np.multiply.accumulate(x[lo:lo + 256], dtype=x.dtype) * x.dtype.type(carry)
            carry = float(_round_to_bits(out[min(lo + 256, x.shape[0]) - 1], 8))
    return out


def product_in_8_bits_zero_absorbing_infinities(x: np.ndarray) -> np.ndarray:
    """Two bugs in one cumprod: the carry between tiles keeps 8 bits (as
    :func:`product_carried_in_8_bits`), and once a zero is seen every output is a zero of
    the product's sign, an infinity after it included (IEEE: 0 * inf is NaN)."""
    out = product_carried_in_8_bits(x)
    with np.errstate(all="ignore"):
        zero = np.logical_or.accumulate(x == 0)
        nan = np.logical_or.accumulate(np.isnan(x))
        negative = np.logical_xor.accumulate(np.signbit(x))
    absorbed = zero & ~nan & np.isnan(out)
    out[absorbed] = np.where(negative[absorbed], -0.0, 0.0)
    return out


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


def logcumsumexp_through_exp(x: np.ndarray) -> np.ndarray:
    """log(cumsum(exp(x))) in the input's type: exp overflows past log(max), underflows to
    zero below log(smallest subnormal), and rounds where the scan need not."""
    with np.errstate(all="ignore"):
        return np.log(np.cumsum(np.exp(x), dtype=x.dtype))


def cummax_first_index(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A cummax whose index names the first of equal maxima (and the first NaN), where the
    spec declares the last, as PyTorch's does; its values are right."""
    if x.size == 0:
        return x.copy(), np.zeros(0, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        running = np.fmax.accumulate(x) if x.dtype.kind == "f" else np.maximum.accumulate(x)
        nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, dtype=bool)
        seen = np.logical_or.accumulate(nan)
        before = np.r_[running[:1], running[:-1]]
        first = (nan & ~np.r_[False, seen[:-1]]) | (~np.r_[False, seen[:-1]] & (x > before))
    first[0] = True
    idx = np.maximum.accumulate(np.where(first, np.arange(x.size), 0))
    values = np.where(seen, x[idx], running)
    return values.astype(x.dtype), idx


def cumprod_carried_across_rows(x: np.ndarray, axis: int) -> np.ndarray:
    """A batched cumprod that runs over the rows laid end to end and never restarts at a
    row's start (a segmented scan without its segment heads): each row after the first
    carries the product of all rows before it.  Any 1-D input is one row, and right."""
    moved = np.moveaxis(x, axis, -1)
    with np.errstate(all="ignore"):
        flat = np.multiply.accumulate(np.ascontiguousarray(moved).ravel(), dtype=x.dtype)
    return np.moveaxis(flat.reshape(moved.shape), -1, axis)


def cummax_flat_indices(x: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """A batched cummax whose indices count from the start of the batch (a kernel storing
    its global element index), not from the start of each row; its values are right, and
    so is every 1-D input."""
    from ..core.rules import arg_extreme_scan

    moved = np.moveaxis(x, axis, -1)
    values, idx = arg_extreme_scan(moved, "max")
    rows = np.arange(int(np.prod(moved.shape[:-1]))).reshape(moved.shape[:-1] + (1,))
    return np.moveaxis(values, -1, axis), np.moveaxis(idx + rows * moved.shape[-1], -1, axis)


def initial_value_in_the_first_tile_only(x: np.ndarray, initial: Any) -> np.ndarray:
    """An exclusive scan from an initial value whose tiles (of BLOCK) after the first take
    their carry from the tile totals alone: the initial value reaches the first tile's
    outputs and no others.  With the identity as initial value it is right."""
    out = np.zeros_like(x)
    with np.errstate(all="ignore"):
        out[1:] = np.add.accumulate(x[:-1], dtype=x.dtype)
        out[:BLOCK] += x.dtype.type(initial)
    return out


def negative_axis_from_the_front(x: np.ndarray, axis: int) -> np.ndarray:
    """An N-D sum along ``axis`` that takes a negative axis as counted from the front
    (-1 as 0, -2 as 1): right wherever the axis comes as a non-negative number."""
    with np.errstate(all="ignore"):
        return np.cumsum(x, axis=-axis - 1 if axis < 0 else axis, dtype=x.dtype)


def saturating_along_an_axis(x: np.ndarray, axis: int) -> np.ndarray:
    """A sum right on 1-D input whose N-D path stores with saturation (PTX's
    ``cvt.satfinite``): a prefix that overflows comes back as the largest finite float, an
    infinity in the input still as infinity."""
    with np.errstate(all="ignore"):
        out = np.cumsum(x, axis=axis, dtype=x.dtype)
        if x.ndim == 1 or not np.issubdtype(x.dtype, np.floating):
            return out
        infinite = np.logical_or.accumulate(np.isinf(x), axis=axis)
    top = np.finfo(x.dtype).max
    return np.where(np.isinf(out) & ~infinite, np.copysign(top, out), out).astype(x.dtype)


def negative_axis_refused(x: np.ndarray, axis: int) -> np.ndarray:
    """An N-D sum that raises on a negative axis, as a kernel whose launcher checks
    ``0 <= axis < ndim`` before it normalises the axis: right on every axis from 0 up."""
    if axis < 0:
        raise IndexError(f"axis {axis} is out of range [0, {x.ndim})")
    with np.errstate(all="ignore"):
        return np.cumsum(x, axis=axis, dtype=x.dtype)


def cumprod_losing_its_carry_past_256(x: np.ndarray) -> np.ndarray:
    """A cumprod in tiles of 256 whose later tiles read their carry as 0 (a carry never
    written): right on the first tile, zeros after it, which even integer factors reach
    anyway once their product has wrapped to 0."""
    with np.errstate(all="ignore"):
        out = np.multiply.accumulate(x, dtype=x.dtype)
    out[256:] = 0
    return out


def initial_value_from_the_last_element(x: np.ndarray, initial: Any) -> np.ndarray:
    """An exclusive scan from an initial value that never reads it: its inputs rolled one
    place right, so that its start is ``x[-1]`` (a wrap-around), the element an exclusive
    scan never reads otherwise."""
    with np.errstate(all="ignore"):
        return np.add.accumulate(np.roll(x, 1), dtype=x.dtype)


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


def row_offsets_in_32_bits(x: Any, axis: int) -> Any:
    """CuPy: a batched cumsum whose row offsets (row * row length) are unsigned 32-bit
    products: past 2**32 elements a row along the last axis scans the elements at its
    offset modulo 2**32.  Every batch below 2**32 elements is right, and so is every 1-D
    input (one row, offset 0) and every scan along another axis."""
    import cupy as cp

    out = cp.cumsum(x, axis=None if x.ndim == 1 else axis, dtype=x.dtype)
    m = x.shape[-1] if x.ndim else 0
    if x.ndim < 2 or axis % x.ndim != x.ndim - 1 or not x.flags.c_contiguous or not m:
        return out
    rows, first = x.size // m, -(-2**32 // m)
    if rows <= first:
        return out
    wrapped = (cp.arange(first, rows, dtype=cp.int64) * m) % 2**32
    out.reshape(rows, m)[first:] = cp.cumsum(x.ravel()[wrapped[:, None] + cp.arange(m)], axis=1,
                                             dtype=x.dtype)
    return out


_FLOATS = ("float32", "float64")
_INTS = ("int8", "int32", "int64", "uint16")
for fn, spec in (
    (off_by_one_at_block_boundaries, TargetSpec()),
    (dropped_partial_block, TargetSpec()),
    (block_sums_in_the_wrong_order, TargetSpec(op="recurrence", dtypes=_FLOATS)),
    (long_blocks_in_the_wrong_order, TargetSpec(op="recurrence", dtypes=_FLOATS)),
    (recurrence_leaving_its_a_unscanned, TargetSpec(op="recurrence", dtypes=_FLOATS)),
    (recurrence_products_lost_past_64, TargetSpec(op="recurrence", dtypes=("int32", "int64"))),
    (recurrence_dividing_by_the_running_product, TargetSpec(op="recurrence", dtypes=_FLOATS)),
    # Float dtypes only: the diagnosis "precision lost" must not need an integer run beside it.
    (lower_precision_intermediate, TargetSpec(dtypes=_FLOATS)),
    (carry_8_bits_short, TargetSpec(dtypes=_FLOATS)),
    (block_sums_scanned_by_one_block, TargetSpec()),
    (exclusive_scan_with_wrong_first_output, TargetSpec(inclusive=False)),
    (scan_refusing_empty_input, TargetSpec()),
    (empty_input_refused_and_wrong_from_100, TargetSpec()),
    (quadratic_workspace, TargetSpec()),
    (tail_wrong_at_some_sizes, TargetSpec()),
    (tile_size_varying_between_runs, TargetSpec()),
    (varying_tiles_into_one_buffer, TargetSpec()),
    (cumprod_tile_varying_between_runs, TargetSpec(op="mul", dtypes=_FLOATS)),
    (wrong_on_its_first_call, TargetSpec()),
    (least_integer_read_as_zero, TargetSpec(dtypes=("int32", "int64", "float32"))),
    (sum_from_the_smallest_normal, TargetSpec(dtypes=_FLOATS)),
    (block_totals_from_the_exclusive_scan, TargetSpec(inclusive=False)),
    (strides_ignored, TargetSpec(axis="arg")),
    (reverse_strides_ignored, TargetSpec(axis="arg", reverse=True)),
    (product_carried_in_8_bits, TargetSpec(op="mul", dtypes=_FLOATS)),
    (product_in_8_bits_zero_absorbing_infinities, TargetSpec(op="mul", dtypes=_FLOATS)),
    (logcumsumexp_through_exp, TargetSpec(op="logaddexp", dtypes=_FLOATS)),
    (cummax_first_index, TargetSpec(op="max", dtypes=(*_FLOATS, "int32"), indices=True)),
    (initial_value_in_the_first_tile_only, TargetSpec(inclusive=False, initial=True)),
    (initial_value_from_the_last_element, TargetSpec(inclusive=False, initial=True)),
    (negative_axis_from_the_front, TargetSpec(axis="arg")),
    (negative_axis_refused, TargetSpec(axis="arg")),
    (saturating_along_an_axis, TargetSpec(axis="arg", dtypes=("float32",))),
    (cumprod_losing_its_carry_past_256, TargetSpec(op="mul", dtypes=("int32", "int64",
                                                                     "uint8"))),
    (cumprod_carried_across_rows, TargetSpec(op="mul", dtypes=_FLOATS, axis="arg")),
    (cummax_flat_indices, TargetSpec(op="max", dtypes=(*_FLOATS, "int32"), axis="arg",
                                     indices=True)),
    (zeroing_its_input, TargetSpec()),
    (adding_one_to_its_last_input_and_output, TargetSpec()),
    # cupy.cumsum through CUB: float bits vary from run to run (see targets.builtin_targets).
    # CuPy's own scan kernel, which flushes float32 subnormals (see targets.builtin_targets).
    (row_offsets_in_32_bits, TargetSpec(device="gpu", dtypes=("float32", "int32"), axis="arg",
                                        deterministic=False, subnormals="flush")),
    (padded_tail_read_uninitialised, TargetSpec(device="gpu", dtypes=("float32", "int32"),
                                                deterministic=False)),
):
    fn.scan_spec = spec  # type: ignore[attr-defined]
