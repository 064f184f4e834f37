"""Broken scans of the operators other than the sum (:mod:`scancheck.controls`), each with
the spec it declares: the recurrence pair, products, log-sum-exp and running extremes with
their indices.  Each is wrong in one way that one check of scancheck, and no weaker one,
must catch.
"""

from __future__ import annotations

import numpy as np

from ..targets.spec import TargetSpec
from .sums import BLOCK, round_to_bits, tiles

_FLOATS = ("float32", "float64")

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
    local = np.moveaxis(pair_scan(np.moveaxis(pad, 1, 0)), 0, 1)
    out = np.empty_like(local)
    with np.errstate(all="ignore"):
        carry = identity
        for j in range(local.shape[0]):
            out[j] = op.combine(local[j], carry)  # should be combine(carry, local)
            carry = out[j, -1]
    return out.reshape(-1, 2)[:n]


def pair_scan(x: np.ndarray) -> np.ndarray:
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
    out = pair_scan(x)
    out[:, 0] = x[:, 0]
    return out


def recurrence_products_lost_past_64(x: np.ndarray) -> np.ndarray:
    """Integer recurrence pairs whose running products of the a's read 0 past 64 pairs (a
    carry of the products never written): right while the products of even a's have
    wrapped to 0 anyway."""
    with np.errstate(all="ignore"):
        out = pair_scan(x)
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
        ends = pair_scan(np.stack([prod[:, -1], local[:, -1]], axis=-1))
        carry = np.r_[np.array([(1, 0)], x.dtype), ends[:-1]]
        out = np.stack([prod * carry[:, :1], local + prod * carry[:, 1:]], axis=-1)
    return out.reshape(-1, 2)[:n]


def cumprod_tile_varying_between_runs(x: np.ndarray) -> np.ndarray:
    """A blocked cumprod whose tile size changes from run to run: each run within the
    products' bound, its rounding not the same twice."""
    tile = int(np.random.default_rng().integers(2, 64))
    with np.errstate(all="ignore"):
        local = tiles(x, tile, np.multiply)
        carries = np.multiply.accumulate(np.r_[np.ones(1, x.dtype), local[:-1, -1]],
                                         dtype=x.dtype)
        return (local * carries[:, None]).ravel()[:x.size]


def product_carried_in_8_bits(x: np.ndarray) -> np.ndarray:
    """A blocked cumprod (tiles of 256) whose carry between tiles keeps 8 significand bits,
    bfloat16's: a mixed-precision carry.  Factors whose products are powers of two pass."""
    out = np.empty_like(x)
    carry = 1.0
    with np.errstate(all="ignore"):
        for lo in range(0, x.shape[0], 256):
            out[lo:lo + 256] = np.multiply.accumulate(x[lo:lo + 256], dtype=x.dtype) * x.dtype.type(carry)
            carry = float(round_to_bits(out[min(lo + 256, x.shape[0]) - 1], 8))
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


def cumprod_losing_its_carry_past_256(x: np.ndarray) -> np.ndarray:
    """A cumprod in tiles of 256 whose later tiles read their carry as 0 (a carry never
    written): right on the first tile, zeros after it, which even integer factors reach
    anyway once their product has wrapped to 0."""
    with np.errstate(all="ignore"):
        out = np.multiply.accumulate(x, dtype=x.dtype)
    out[256:] = 0
    return out


def integer_product_kept_in_int16(x: np.ndarray) -> np.ndarray:
    """An integer product whose running value is an int16 (a kernel's workspace sized for
    the narrowest type it was written for), widened back: right while every input and
    prefix fits 16 bits."""
    with np.errstate(all="ignore"):
        return np.multiply.accumulate(x.astype(np.int16), dtype=np.int16).astype(x.dtype)


def exclusive_max_starting_from_zero(x: np.ndarray) -> np.ndarray:
    """An exclusive running max whose first output is 0, the identity of a sum (a buffer
    zeroed for it), where the identity of max belongs: every other output is right."""
    out = np.empty_like(x)
    out[1:] = np.maximum.accumulate(x[:-1])
    out[:1] = 0
    return out


for fn, spec in (
    (block_sums_in_the_wrong_order, TargetSpec(op="recurrence", dtypes=_FLOATS)),
    (long_blocks_in_the_wrong_order, TargetSpec(op="recurrence", dtypes=_FLOATS)),
    (recurrence_leaving_its_a_unscanned, TargetSpec(op="recurrence", dtypes=_FLOATS)),
    (recurrence_products_lost_past_64, TargetSpec(op="recurrence", dtypes=("int32", "int64"))),
    (recurrence_dividing_by_the_running_product, TargetSpec(op="recurrence", dtypes=_FLOATS)),
    (cumprod_tile_varying_between_runs, TargetSpec(op="mul", dtypes=_FLOATS)),
    (product_carried_in_8_bits, TargetSpec(op="mul", dtypes=_FLOATS)),
    (product_in_8_bits_zero_absorbing_infinities, TargetSpec(op="mul", dtypes=_FLOATS)),
    (logcumsumexp_through_exp, TargetSpec(op="logaddexp", dtypes=_FLOATS)),
    (integer_product_kept_in_int16, TargetSpec(op="mul", dtypes=("int32", "int64"))),
    (exclusive_max_starting_from_zero, TargetSpec(op="max", inclusive=False,
                                                  dtypes=(*_FLOATS, "int32"))),
    (cummax_first_index, TargetSpec(op="max", dtypes=(*_FLOATS, "int32"), indices=True)),
    (cumprod_losing_its_carry_past_256, TargetSpec(op="mul", dtypes=("int32", "int64",
                                                                     "uint8"))),
):
    fn.scan_spec = spec  # type: ignore[attr-defined]
