"""Broken scans of declared contracts and special values (:mod:`scancheck.controls`): NaN
rules, zero orders, subnormals, checked overflow, promotion and accumulation.  Each breaks
the contract its spec declares in one way that one check of scancheck, and no weaker one,
must catch.
"""

from __future__ import annotations

import numpy as np

from ..core.dtypes import finfo
from ..targets.spec import TargetSpec

_FLOATS = ("float32", "float64")
_INTS = ("int8", "int32", "int64", "uint16")


def nan_dropping_max(x: np.ndarray) -> np.ndarray:
    """A running maximum with fmax, which ignores NaN instead of propagating it."""
    with np.errstate(all="ignore"):
        return np.fmax.accumulate(x)


def max_ignoring_nan_unless_first(x: np.ndarray) -> np.ndarray:
    """A running maximum that ignores NaN (fmax), except that a NaN first input makes every
    output NaN: NaN rules read off NaNs among finite values fit it (ignore), and none fits
    the inputs that start with NaN."""
    with np.errstate(all="ignore"):
        if x.size and np.isnan(x[0]):
            return np.full_like(x, x[0])
        return np.fmax.accumulate(x)


def sum_reading_a_late_nan_as_zero(x: np.ndarray) -> np.ndarray:
    """A running sum whose last tile of 64 reads NaN as zero past 4000 elements: a NaN there
    shows only where no special came before it, which data one element in 20 special never
    give at such sizes."""
    with np.errstate(all="ignore"):
        n = x.size
        if n > 4000:
            x = x.copy()
            tail = x[(n - 1) // 64 * 64:]
            tail[np.isnan(tail)] = 0
        return np.add.accumulate(x, dtype=x.dtype)


def exclusive_sum(x: np.ndarray) -> np.ndarray:
    """A right exclusive running sum (output k sums x[0] .. x[k-1]), declared inclusive."""
    out = np.zeros_like(x)
    with np.errstate(all="ignore"):
        out[1:] = np.add.accumulate(x[:-1], dtype=x.dtype)
    return out


def running_max(x: np.ndarray) -> np.ndarray:
    """A right running maximum, declared a sum (the operator's flag left out)."""
    return np.maximum.accumulate(x)


def reverse_running_max(x: np.ndarray) -> np.ndarray:
    """A right reverse running maximum (output k is the max of x[k:]), declared forward."""
    return np.maximum.accumulate(x[::-1])[::-1].copy()


def forward_running_sum(x: np.ndarray) -> np.ndarray:
    """A right forward running sum (output k is the sum of x[:k + 1]), declared reverse."""
    with np.errstate(all="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


def _sum_reading_nans_as_zero(x: np.ndarray, signed: bool) -> np.ndarray:
    """The running sum of ``x`` with its NaNs of sign bit ``signed`` read as 0."""
    with np.errstate(all="ignore"):
        return np.add.accumulate(np.where(np.isnan(x) & (np.signbit(x) == signed),
                                          x.dtype.type(0), x), dtype=x.dtype)


def sum_ignoring_quiet_nans_only(x: np.ndarray) -> np.ndarray:
    """A sum declared NaN-ignoring (nancumsum) whose NaN test looks at the sign bit too: a
    NaN with it set (x86's default) propagates, and the quiet NaN is ignored."""
    return _sum_reading_nans_as_zero(x, signed=False)


def sum_reading_negative_nan_as_zero(x: np.ndarray) -> np.ndarray:
    """A sum that reads a NaN with its sign bit set (x86's default NaN, which inf - inf
    makes) as 0, as a test ``x == x`` written as a sign check might: the quiet NaN, and a
    payload, propagate."""
    return _sum_reading_nans_as_zero(x, signed=True)


def max_writing_zero_for_nan(x: np.ndarray) -> np.ndarray:
    """A running maximum that leaves NaN out (C fmax) but writes 0.0 as a NaN input's own
    output: no NaN rule (propagate, ignore, skip) returns that, so it is broken NaN
    handling, not another contract."""
    with np.errstate(all="ignore"):
        out = np.fmax.accumulate(x)
    return np.where(np.isnan(x), x.dtype.type(0), out).astype(x.dtype)


def max_started_from_minus_1e30(x: np.ndarray) -> np.ndarray:
    """A running maximum started from -1e30 where -inf is its identity: wrong wherever a
    prefix lies below -1e30, at -inf as at a finite -3e38 -- one logic error, which a
    wrong infinity must not make a second cause told as NaN handling."""
    with np.errstate(all="ignore"):
        return np.maximum(np.maximum.accumulate(x), x.dtype.type(-1e30)).astype(x.dtype)


def sum_declaring_skip_that_propagates(x: np.ndarray) -> np.ndarray:
    """A running sum declared NaN-skipping (pandas' skipna) that propagates NaN as IEEE
    arithmetic does: NaN at each NaN input, as declared, but NaN after it too."""
    with np.errstate(all="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


def product_skipping_nan_as_one(x: np.ndarray) -> np.ndarray:
    """A running product declared NaN-skipping that leaves a NaN input's output at the
    product before it (NaN read as 1) instead of NaN: numpy.nancumprod's rule, not pandas'."""
    with np.errstate(all="ignore"):
        return np.multiply.accumulate(np.where(np.isnan(x), x.dtype.type(1), x), dtype=x.dtype)


def _overflows(acc: int, dtype: np.dtype) -> bool:
    info = np.iinfo(dtype)
    return not int(info.min) <= acc <= int(info.max)


def checked_sum_raising_one_late(x: np.ndarray) -> np.ndarray:
    """A checked integer sum (as pyarrow's cumulative_sum_checked) that tests each prefix
    for overflow only when the next element comes: the last output may wrap silently."""
    out = np.add.accumulate(x, dtype=x.dtype) if x.size else x.copy()
    acc = 0
    for k, v in enumerate(x.tolist()[:-1]):
        acc += v
        if _overflows(acc, x.dtype):
            raise OverflowError(f"overflow at index {k}")
    return out


def checked_sum_testing_the_total_only(x: np.ndarray) -> np.ndarray:
    """A checked integer sum that tests the whole input's total alone: it raises where the
    total leaves the type, and wraps silently where only a prefix does."""
    if x.size and _overflows(sum(int(v) for v in x.tolist()), x.dtype):
        raise OverflowError("the total overflows")
    with np.errstate(over="ignore"):
        return np.add.accumulate(x, dtype=x.dtype) if x.size else x.copy()


def checked_sum_missing_the_limit_by_one(x: np.ndarray) -> np.ndarray:
    """A checked integer sum whose test is off by one (a prefix of max + 1 or min - 1 wraps
    silently, one further raises): drawn data almost never land a prefix there."""
    info = np.iinfo(x.dtype)
    acc = 0
    for k, v in enumerate(x.tolist()):
        acc += v
        if acc > int(info.max) + 1 or acc < int(info.min) - 1:
            raise OverflowError(f"overflow at index {k}")
    with np.errstate(over="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


def checked_sum_wrapping(x: np.ndarray) -> np.ndarray:
    """An integer sum declared checked (overflow='raise') that wraps silently."""
    with np.errstate(over="ignore"):
        return np.add.accumulate(x, dtype=x.dtype)


def checked_sum(x: np.ndarray) -> np.ndarray:
    """A correct checked integer sum: raises OverflowError exactly when a prefix leaves the
    type (a reference, not a control: it must conform under overflow='raise')."""
    acc = 0
    for k, v in enumerate(x.tolist()):
        acc += v
        if _overflows(acc, x.dtype):
            raise OverflowError(f"overflow at index {k}")
    return np.add.accumulate(x, dtype=x.dtype) if x.size else x.copy()


def sum_refusing_long_int8(x: np.ndarray) -> np.ndarray:
    """An integer sum that raises on every int8 input past 3000 elements, whatever its
    values (its multi-tile path has no int8 kernel): int8 data that long overflow, but the
    raise is no overflow check."""
    if x.dtype == np.int8 and x.size > 3000:
        raise TypeError("no int8 kernel past one tile")
    with np.errstate(over="ignore"):
        return np.add.accumulate(x, dtype=x.dtype) if x.size else x.copy()


def float32_sum_declaring_float64_accumulation(x: np.ndarray) -> np.ndarray:
    """A float32 running sum in float32 that declares float64 accumulation (as polars'
    cum_sum has): within float32's own bound, not within that of a float64 accumulator."""
    return np.add.accumulate(x, dtype=x.dtype)


def matrix_scan_refusing_rank_3(x: np.ndarray, axis: int) -> np.ndarray:
    """A scan along an axis that declares ranks 2 and 3 (ndim=(2, 3)) but refuses 3-D
    arrays, as a 2-D-only API wrapped without its declared rank."""
    if x.ndim != 2 and x.shape[axis] > 1:  # rows of one element pass: only the rank shows
        raise ValueError(f"expected a 2-D array, got shape {x.shape}")
    return np.add.accumulate(x, axis=axis, dtype=x.dtype)


def sum_compensated_past_infinity(x: np.ndarray) -> np.ndarray:
    """A compensated (Kahan) running sum, in effect: exact enough on finite data, but once
    the running sum is infinite its correction term is inf - inf, and every later output
    NaN (pandas' groupby cumsum on an inf)."""
    with np.errstate(all="ignore"):
        out = np.add.accumulate(x, dtype=x.dtype)
    gone = np.logical_or.accumulate(np.isinf(out)) if out.size else np.isinf(out)
    return np.where(gone, x.dtype.type(np.nan), out).astype(x.dtype)


def overflow_guard_too_low(x: np.ndarray) -> np.ndarray:
    """A sequential scan that sets its running sum to +inf once it passes half the largest
    float (a guard against overflow written with the wrong threshold): it returns infinities
    where no summation order can overflow, which only data near the overflow threshold show."""
    with np.errstate(all="ignore"):
        out = np.add.accumulate(x, dtype=x.dtype)
        over = np.flatnonzero(np.abs(out) > finfo(x.dtype).max / 2)
        if over.size:  # s = copysign(inf, s), and the sequential sum goes on from there
            t = over[0]
            out[t] = np.copysign(np.inf, out[t])
            out[t:] = np.add.accumulate(np.concatenate([out[t:t + 1], x[t + 1:]]))
        return out


def max_keeping_the_earlier_zero(x: np.ndarray) -> np.ndarray:
    """A max scan declared IEEE 754-2019 (-0 < +0) whose ties keep the earlier operand, as a
    ``b > a ? b : a`` functor does: the max of -0 and +0 comes back -0."""
    from ..core.rules import extreme_scan

    return extreme_scan(x, "max", zeros="either")


def max_giving_minus_zero_for_every_zero(x: np.ndarray) -> np.ndarray:
    """A max scan declared IEEE 754-2019 (-0 < +0) whose every zero answer comes back -0 (a
    sign bit set in its epilogue): wrong where the prefix holds +0, under either zero order,
    so no zero order explains it."""
    from ..core.rules import extreme_scan

    out = extreme_scan(x, "max", zeros="ordered")
    return np.where(out == 0, x.dtype.type(-0.0), out)


def max_adding_zero_to_each_output(x: np.ndarray) -> np.ndarray:
    """A max scan (zeros='either', the open order) whose epilogue adds 0.0 to each output,
    as a fused bias of zero does: -0 + 0.0 is +0, so a prefix whose zeros are all -0 gets a
    zero that none of its inputs is."""
    from ..core.rules import extreme_scan

    with np.errstate(invalid="ignore"):
        return extreme_scan(x, "max") + x.dtype.type(0)


def max_racing_between_equal_zeros(x: np.ndarray) -> np.ndarray:
    """A max scan (zeros='either') whose zero answers take the sign of whichever tied zero
    of the prefix wins a race, -0 or +0 by chance: each run allowed, no two runs alike."""
    from ..core.rules import extreme_scan, zero_held

    out = extreme_scan(x, "max")
    minus = zero_held(x, np.full_like(x, -0.0))  # the prefix holds a -0
    plus = zero_held(x, np.zeros_like(x))
    races = np.random.default_rng().integers(0, 2, x.size).astype(bool)
    sign = np.where(minus & plus, races, minus)
    return np.where(out == 0, np.where(sign, -0.0, 0.0).astype(x.dtype), out)


def min_propagating_nan(x: np.ndarray) -> np.ndarray:
    """A min scan declared NaN-ignoring (C fmin) that propagates NaN instead."""
    with np.errstate(all="ignore"):
        return np.minimum.accumulate(x)


def subnormal_inputs_read_as_zero(x: np.ndarray) -> np.ndarray:
    """A sequential scan on a machine that reads subnormal inputs as zero (DAZ, as XLA sets
    it on CPUs), declaring IEEE gradual underflow: only subnormal data show it."""
    tiny = finfo(x.dtype).smallest_normal
    with np.errstate(all="ignore"):
        return np.add.accumulate(np.where(np.abs(x) < tiny, x * 0, x), dtype=x.dtype)


def max_reading_subnormals_as_zero(x: np.ndarray) -> np.ndarray:
    """A running max as fmaxf compiled with -ftz=true computes it (max.ftz: subnormal inputs
    read as zeros of their sign, -0 below +0; docs/explanation/special-values.md), declaring IEEE gradual
    underflow: only subnormal data show it."""
    from ..core.dtypes import read_as_zero
    from ..core.rules import extreme_scan

    return extreme_scan(read_as_zero(x), "max", zeros="ordered")


def max_keeping_subnormals_declared_flushing(x: np.ndarray) -> np.ndarray:
    """A right IEEE running max whose spec declares subnormals='flush', which for max means
    every subnormal reads as zero: its subnormal answers are kept, not flushed."""
    with np.errstate(invalid="ignore"):
        return np.maximum.accumulate(x)


def cumprod_reading_subnormals_as_zero(x: np.ndarray) -> np.ndarray:
    """A sequential cumprod with DAZ and FTZ (subnormal factors and products read as zeros of
    their sign), declaring IEEE gradual underflow: the products from the first subnormal on
    are zeros, where every order of multiplication of signed powers of two is exact."""
    from ..core.dtypes import read_as_zero, subnormal

    y = read_as_zero(x)
    with np.errstate(all="ignore"):
        out = np.multiply.accumulate(y, dtype=x.dtype)
        under = subnormal(out)
        if under.any():  # flushed there, a zero ever after: NaN from an infinity or NaN on
            t = int(np.argmax(under))
            sign = np.logical_xor.accumulate(np.signbit(y))[t:]
            dead = np.logical_or.accumulate(~np.isfinite(y[t:]))
            out[t:] = np.where(dead, np.nan, np.where(sign, -0.0, 0.0))
    return out


def recurrence_reading_subnormals_as_zero(x: np.ndarray) -> np.ndarray:
    """Recurrence pairs scanned right (by doubling) from inputs read as zero below the normal
    numbers, outputs flushed the same way (DAZ and FTZ), declaring IEEE gradual underflow:
    only pairs whose y_k are subnormal show it."""
    from ..core.dtypes import read_as_zero
    from .operators import pair_scan

    return read_as_zero(pair_scan(read_as_zero(x)))


def promoted_after_the_sum(x: np.ndarray) -> np.ndarray:
    """A sum that promises NumPy's promotions (bool and narrow integers to 64 bits) but
    sums in the input's own type and widens the result: the dtype is right, and so is every
    output until a prefix leaves the narrow type (in bool, + is a logical or: from the
    second true on)."""
    with np.errstate(over="ignore"):
        return np.add.accumulate(x, dtype=x.dtype).astype(np.uint64 if x.dtype.kind == "u"
                                                          else np.int64)


_N_D_CALLS = [0]


def rows_flipping_their_accumulation_type(x: np.ndarray, axis: int) -> np.ndarray:
    """A float32 sum whose N-D path accumulates in float32 and float64 on alternate calls (a
    plan cache that flips between two plans): each run within the bound, no two in a row
    alike; its 1-D path is fixed."""
    if x.ndim == 1:
        return np.cumsum(x, dtype=x.dtype)
    _N_D_CALLS[0] += 1
    wide = _N_D_CALLS[0] % 2 == 0
    return np.cumsum(x, axis=axis, dtype=np.float64 if wide else x.dtype).astype(x.dtype)


def float32_rows_declaring_float64_accumulation(x: np.ndarray, axis: int) -> np.ndarray:
    """A float32 sum declaring float64 accumulation that keeps it on 1-D input, and on N-D
    input sums in float32 (a second code path that forgot the declaration)."""
    if x.ndim == 1:
        return np.cumsum(x, dtype=np.float64).astype(x.dtype)
    return np.cumsum(x, axis=axis, dtype=x.dtype)


for fn, spec in (
    (nan_dropping_max, TargetSpec(op="max", dtypes=_FLOATS)),
    (max_ignoring_nan_unless_first, TargetSpec(op="max", dtypes=_FLOATS)),
    (sum_reading_a_late_nan_as_zero, TargetSpec(dtypes=_FLOATS)),
    (exclusive_sum, TargetSpec(dtypes=("int32", "float32"))),
    (reverse_running_max, TargetSpec(op="max", dtypes=("int16", "float64"))),
    (running_max, TargetSpec(dtypes=("int32", "float32"))),
    (forward_running_sum, TargetSpec(reverse=True, dtypes=("int32", "float32"))),
    (float32_sum_declaring_float64_accumulation,
     TargetSpec(dtypes=("float32",), accumulates=(("float32", "float64"),))),
    (rows_flipping_their_accumulation_type, TargetSpec(dtypes=("float32",), axis="arg")),
    (float32_rows_declaring_float64_accumulation,
     TargetSpec(dtypes=("float32",), accumulates=(("float32", "float64"),), axis="arg")),
    (matrix_scan_refusing_rank_3, TargetSpec(dtypes=_INTS, axis="arg", ndim=(2, 3))),
    (sum_compensated_past_infinity, TargetSpec(dtypes=_FLOATS)),
    (checked_sum_raising_one_late, TargetSpec(dtypes=_INTS, overflow="raise")),
    (checked_sum_testing_the_total_only, TargetSpec(dtypes=_INTS, overflow="raise")),
    (checked_sum_wrapping, TargetSpec(dtypes=_INTS, overflow="raise")),
    (checked_sum_missing_the_limit_by_one, TargetSpec(dtypes=_INTS, overflow="raise")),
    (checked_sum, TargetSpec(dtypes=_INTS, overflow="raise")),
    (sum_refusing_long_int8, TargetSpec(dtypes=("int8", "int32"))),
    (max_writing_zero_for_nan, TargetSpec(op="max", dtypes=_FLOATS)),
    (max_started_from_minus_1e30, TargetSpec(op="max", dtypes=_FLOATS)),
    (sum_reading_negative_nan_as_zero, TargetSpec(dtypes=_FLOATS)),
    (sum_ignoring_quiet_nans_only, TargetSpec(dtypes=_FLOATS, nans="ignore",
                                              nan_prefix="identity")),
    (sum_declaring_skip_that_propagates, TargetSpec(dtypes=_FLOATS, nans="skip")),
    (product_skipping_nan_as_one, TargetSpec(op="mul", dtypes=_FLOATS, nans="skip")),
    (overflow_guard_too_low, TargetSpec(dtypes=_FLOATS)),
    (max_keeping_the_earlier_zero, TargetSpec(op="max", dtypes=_FLOATS, zeros="ordered")),
    (max_giving_minus_zero_for_every_zero, TargetSpec(op="max", dtypes=_FLOATS,
                                                      zeros="ordered")),
    (max_adding_zero_to_each_output, TargetSpec(op="max", dtypes=_FLOATS)),
    (max_racing_between_equal_zeros, TargetSpec(op="max", dtypes=_FLOATS)),
    (min_propagating_nan, TargetSpec(op="min", dtypes=_FLOATS, nans="ignore")),
    (subnormal_inputs_read_as_zero, TargetSpec(dtypes=_FLOATS)),
    (max_reading_subnormals_as_zero, TargetSpec(op="max", dtypes=_FLOATS)),
    (max_keeping_subnormals_declared_flushing, TargetSpec(op="max", dtypes=_FLOATS,
                                                          subnormals="flush")),
    (cumprod_reading_subnormals_as_zero, TargetSpec(op="mul", dtypes=_FLOATS)),
    (recurrence_reading_subnormals_as_zero, TargetSpec(op="recurrence", dtypes=_FLOATS)),
    (promoted_after_the_sum, TargetSpec(dtypes=("bool", "int8", "int16", "uint8", "uint16"),
                                        promote=(("bool", "int64"), ("int8", "int64"),
                                                 ("int16", "int64"), ("uint8", "uint64"),
                                                 ("uint16", "uint64")))),
):
    fn.scan_spec = spec  # type: ignore[attr-defined]
