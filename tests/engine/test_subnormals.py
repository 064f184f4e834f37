"""Subnormals read as zero (DAZ and FTZ) under every float operator: flushing is named as
such where the spec keeps subnormals, honoured where it declares subnormals='flush' (as
the operator's ``flush`` column allows: FLUSH_RULES), and a declared flush that keeps
subnormals, or flushes only some, of an exact operator still fails.  The flushing scans
below compute what docs/explanation/special-values.md measured flush-to-zero hardware to compute."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scancheck.controls import declared, operators
from scancheck.core.dtypes import SIGNIFICAND_BITS, finfo, read_as_zero, subnormal
from scancheck.core.operators import OPERATORS, get_operator, sequential_scan
from scancheck.core.rules import (
    FLUSH_RULES,
    arg_extreme_scan,
    extreme_scan,
    flushed_dtypes,
    flushed_extreme_scan,
)
from scancheck.engine.cases import Case
from scancheck.engine.conformance import check_property
from scancheck.engine.diagnosis import Cause
from scancheck.engine.properties import TABLE
from scancheck.engine.properties.base import Untold
from scancheck.engine.properties.subnormals import scaled_out
from scancheck.engine.strategies import generate_data
from scancheck.oracle.products import judge_products
from scancheck.targets.resolve import resolve
from scancheck.targets.spec import TargetSpec
from scancheck.targets.target import Target

FLOATS = ("float32", "float64")
#: Targets below that loop in Python are searched to small sizes only.
SMALL = 512


def _target(fn, **spec):
    return Target(getattr(fn, "__name__", "fn"), fn, TargetSpec(**{"dtypes": FLOATS, **spec}))


def _flushing(op):
    """A sequential scan under DAZ and FTZ: every operand and result read as zero below the
    normal numbers (sign kept), as -ftz=true arithmetic does."""
    combine = get_operator(op).combine

    def scan(x):
        y = read_as_zero(x)
        out = np.empty_like(y)
        with np.errstate(all="ignore"):
            for k in range(y.shape[0]):
                out[k] = y[k] if k == 0 else read_as_zero(np.asarray(combine(out[k - 1], y[k])))
        return out

    return scan


def _selecting(which, later):
    """A sequential compare-and-select max or min compiled with -ftz=true: comparisons read
    subnormals as zero (setp.ftz), the selected operand's bits are returned (selp); the
    earlier or the later operand wins ties."""
    def scan(x):
        key = read_as_zero(x)
        out = np.empty_like(x)
        best = None
        for k in range(x.shape[0]):
            if best is None or key[best] != key[best]:
                best = k if best is None else best
            else:
                beats = key[k] > key[best] if which == "max" else key[k] < key[best]
                if key[k] != key[k] or beats or (later and key[k] == key[best]):
                    best = k
            out[k] = x[best]
        return out

    return scan


def test_every_operator_says_what_flushing_allows():
    assert {op.flush for op in OPERATORS.values()} <= set(FLUSH_RULES)
    # Rounding operators may flush, selecting ones must.
    assert {n for n, op in OPERATORS.items() if op.flush == "exact"} == {
        "max", "min", "argmax", "argmin", "interval"}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_read_as_zero_keeps_the_sign_and_every_other_bit(dtype):
    info = finfo(dtype)
    x = np.array([info.smallest_subnormal, -info.smallest_subnormal, info.smallest_normal,
                  -0.0, 1.0, np.nan, -np.inf], dtype=np.float64).astype(
        np.dtype(type(info.max)))
    z = read_as_zero(x)
    assert subnormal(x).tolist() == [True, True, False, False, False, False, False]
    assert (z[:2] == 0).all() and np.signbit(z[:2]).tolist() == [False, True]
    assert z[2:].tobytes() == x[2:].tobytes()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), which=st.sampled_from(["max", "min"]),
       dtype=st.sampled_from(FLOATS))
def test_the_flushed_extreme_is_what_ftz_hardware_returns(seed, n, which, dtype):
    """fmaxf/fminf under -ftz=true flush the answer (and order -0 below +0); a compare-and-
    select returns the first (earlier wins ties) or the last (later wins) input tied with
    it: the oracle's answer and its first and last tied inputs, on the data that show it."""
    x = generate_data(np.random.default_rng(seed), n, dtype, "subnormal")
    answer, first, last = flushed_extreme_scan(x, which)
    ordered = extreme_scan(read_as_zero(x), which, zeros="ordered")
    assert (answer == ordered).all() and not subnormal(answer).any()
    assert _selecting(which, False)(x).tobytes() == x[first].tobytes()
    assert _selecting(which, True)(x).tobytes() == x[last].tobytes()


def test_the_measured_sequence_scans_as_the_h100_did():
    """docs/explanation/special-values.md, float32 under -ftz=true: x = [-1, 2s, -s, 3s, -0, s, +0, -2s]."""
    s = float(np.finfo(np.float32).smallest_subnormal)
    x = np.array([-1.0, 2 * s, -s, 3 * s, -0.0, s, 0.0, -2 * s], np.float32)
    ordered = flushed_extreme_scan(x, "max", zeros="ordered")[0]  # max by fmax: -0 below +0
    assert ordered.tolist() == [-1.0] + [0.0] * 7 and not np.signbit(ordered[1:]).any()
    answer, first, last = flushed_extreme_scan(x, "max")  # the selects: -0 ties with +0
    assert (answer == ordered).all()
    assert x[first].tolist() == [-1.0] + [2 * np.float32(s)] * 7  # max by b>a?b:a
    assert (last == np.arange(8)).all()  # max by b>=a?b:a, and its index
    assert (arg_extreme_scan(read_as_zero(x), "max")[1] == np.arange(8)).all()


@pytest.mark.parametrize("which", ["max", "min"])
def test_a_flushing_max_or_min_is_named_and_conforms_where_declared(which, budget):
    for scan in (_flushing(which), _selecting(which, False), _selecting(which, True)):
        small = replace(budget, max_n=SMALL)
        r = check_property(_target(scan, op=which), "floats within bound", small)
        assert r.status == "fail" and r.cause == "PRECISION", r
        assert "subnormals read as zero" in r.diagnosis and "is subnormal" in r.diagnosis
        assert r.smallest_case["data"] == "subnormal"
        declared = _target(scan, op=which, subnormals="flush")
        assert check_property(declared, "floats within bound", small).status == "pass"


def test_a_declared_flush_of_max_must_flush_every_subnormal(budget):
    """Keeping them all, or flushing every other one, fails with the subnormal named; the
    same right scan declared 'keep' conforms."""
    kept = resolve("scancheck.controls.declared:max_keeping_subnormals_declared_flushing")
    r = check_property(kept, "floats within bound", budget)
    assert r.status == "fail" and r.cause == "PRECISION" and "subnormals kept" in r.diagnosis
    assert check_property(_target(kept.fn, op="max"), "floats within bound",
                          budget).status == "pass"
    # Declared for float32 alone and keeping them there: 'keep' is the one declaration that
    # fits, not the one already made.
    one = _target(kept.fn, op="max", dtypes=("float32",), subnormals="flush:float32")
    r = check_property(one, "floats within bound", budget)
    assert r.status == "fail" and "declares subnormals='keep';" in r.diagnosis, r.diagnosis
    assert "names them" not in r.diagnosis

    def half(x):  # DAZ on the inputs at even places only
        odd = np.arange(x.shape[0]) % 2 == 1
        with np.errstate(invalid="ignore"):
            return np.maximum.accumulate(np.where(odd, x, read_as_zero(x)))

    r = check_property(_target(half, op="max", subnormals="flush"), "floats within bound",
                       budget)
    assert r.status == "fail" and r.cause == "PRECISION", r
    assert "some subnormals read as zero and others kept" in r.diagnosis


def test_declaring_flush_hides_no_other_error(budget):
    """A NaN dropped, a block dropped, a product carried in 8 bits and a recurrence's blocks
    in the wrong order keep their diagnoses under subnormals='flush'."""
    flush = {"subnormals": "flush"}
    r = check_property(_target(declared.max_writing_zero_for_nan, op="max", **flush),
                       "nan and inf", budget)
    assert r.cause == "SPECIALS"

    def dropped(x):  # a flushing max whose last partial block of 64 restarts
        y = read_as_zero(x)
        with np.errstate(invalid="ignore"):
            out = np.maximum.accumulate(y)
            full = y.shape[0] // 64 * 64
            if 0 < full < y.shape[0]:
                out[full:] = np.maximum.accumulate(y[full:])
        return out

    r = check_property(_target(dropped, op="max", **flush), "floats within bound", budget)
    assert r.cause == "LOGIC" and "subnormals" not in r.diagnosis
    r = check_property(_target(operators.product_carried_in_8_bits, op="mul", **flush),
                       "products within bound", budget)
    assert r.cause == "PRECISION" and "significand bits" in r.diagnosis
    r = check_property(_target(operators.block_sums_in_the_wrong_order, op="recurrence", **flush),
                       "recurrence", budget)
    assert r.cause == "LOGIC" and "operand order" in r.diagnosis


def test_a_flushing_cumprod_is_named_and_conforms_where_declared(budget):
    """Caught by the products' certificate on 'powers' data only (every order of
    multiplication is exact there, subnormal products included)."""
    t = resolve("scancheck.controls.declared:cumprod_reading_subnormals_as_zero")
    r = check_property(t, "products within bound", budget)
    assert r.status == "fail" and r.cause == "PRECISION" and r.smallest_case["data"] == "powers"
    assert "subnormals read as zero" in r.diagnosis and "product's sign" not in r.diagnosis
    assert check_property(replace(t, spec=replace(t.spec, subnormals="flush")),
                          "products within bound", budget).status == "pass"
    small = replace(budget, max_n=SMALL)
    declared = _target(_flushing("mul"), op="mul", subnormals="flush")
    assert check_property(declared, "products within bound", small).status == "pass"
    # numpy's and itertools' cumprods conform on 'powers' data: test_conformance's built-ins.


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_the_product_certificate_allows_a_flushed_zero_only_where_declared(dtype):
    """Signed powers of two: every order is exact, and the sequential product is; a product
    flushed from its first subnormal on is right under 'flush' alone, and a zero where no
    range leaves the normal numbers is wrong under both."""
    for seed in range(20):
        x = generate_data(np.random.default_rng(seed), 40, dtype, "powers")
        with np.errstate(all="ignore"):
            exact = np.multiply.accumulate(x.astype(np.float64)).astype(x.dtype)
        assert judge_products(x, exact).ok.all() and judge_products(x, exact, flush=True).ok.all()
        flushed = declared.cumprod_reading_subnormals_as_zero(x)
        if (flushed == exact).all():
            continue
        assert judge_products(x, flushed, flush=True).ok.all()
        assert not judge_products(x, flushed).ok.all()
        early = flushed.copy()
        early[0] = 0.0 if x[0] > 0 else -0.0
        if not subnormal(x[:1]).any():
            assert not judge_products(x, early, flush=True).ok[0]


def test_a_flushing_recurrence_is_named_and_conforms_where_declared(budget):
    t = resolve("scancheck.controls.declared:recurrence_reading_subnormals_as_zero")
    r = check_property(t, "recurrence", budget)
    assert r.status == "fail" and r.cause == "PRECISION" and r.smallest_case["data"] == "subnormal"
    assert "subnormals read as zero" in r.diagnosis and "operand order" not in r.diagnosis
    assert check_property(replace(t, spec=replace(t.spec, subnormals="flush")), "recurrence",
                          budget).status == "pass"
    small = replace(budget, max_n=SMALL)
    for scan, spec in ((_flushing("recurrence"), {"subnormals": "flush"}),
                       (lambda x: sequential_scan(x, "recurrence"), {})):
        assert check_property(_target(scan, op="recurrence", **spec), "recurrence",
                              small).status == "pass"
    # The kernels' models, inclusive and exclusive, round below the normal numbers as IEEE
    # does: within the allowance of gradual underflow.
    for name in ("model:decoupled_lookback:64:recurrence", "model:blelloch:64:recurrence"):
        assert check_property(resolve(name), "recurrence", budget).status == "pass", name


def test_subnormal_pairs_make_subnormal_recurrences():
    x = Case(200, "float32", "subnormal", 3).data("recurrence")
    y = sequential_scan(x, "recurrence")[:, 1]
    assert subnormal(y).mean() > 0.2


@pytest.mark.parametrize("values", ["unflushed", "flushed"])
def test_a_flushing_cummax_is_named_and_conforms_where_declared(values, budget):
    """The index of the last input tied once subnormals read as zero; its value unflushed
    (a compare-and-select on the GPU) or flushed (torch on a CPU under
    set_flush_denormal(True)): both as measured."""
    def cummax(x):
        v, i = arg_extreme_scan(read_as_zero(x), "max")
        return (x[i] if values == "unflushed" else v), i

    r = check_property(_target(cummax, op="max", indices=True), "indices", budget)
    assert r.status == "fail" and r.cause == "PRECISION" and "subnormals read as zero" in r.diagnosis
    assert check_property(_target(cummax, op="max", indices=True, subnormals="flush"), "indices",
                          budget).status == "pass"
    kept = _target(lambda x: arg_extreme_scan(x, "max"), op="max", indices=True,
                   subnormals="flush")
    r = check_property(kept, "indices", budget)
    assert r.status == "fail" and "subnormals kept" in r.diagnosis


def test_a_flushing_float16_logaddexp_is_named_and_conforms_where_declared():
    """Only a first output shows it (every later one is within the bound by far), and only
    in float16, whose subnormals exceed the float64 reference's own error."""
    case = next(c for s in range(100) if subnormal(
        (c := Case(6, "float16", "subnormal", s)).data("logaddexp")[:1]).any())
    check = TABLE["logsumexp within bound"].check
    spec = {"dtypes": ("float16",), "op": "logaddexp"}
    failure = check(_target(_flushing("logaddexp"), **spec), case)
    assert failure.cause.name == "PRECISION" and "subnormals read as zero" in failure.diagnosis
    assert check(_target(_flushing("logaddexp"), subnormals="flush", **spec), case) is None


def test_flushing_rows_are_named_and_conform_where_declared(budget):
    def rows_max(x, axis):
        with np.errstate(invalid="ignore"):
            return np.maximum.accumulate(read_as_zero(x), axis=axis)

    r = check_property(_target(rows_max, op="max", axis="arg"), "rows", budget)
    assert r.status == "fail" and r.cause == "PRECISION" and "subnormals read as zero" in r.diagnosis
    assert check_property(_target(rows_max, op="max", axis="arg", subnormals="flush"), "rows",
                          budget).status == "pass"


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_powers_data_dip_below_the_normal_numbers_and_stay_exact(dtype):
    dips = 0
    for seed in range(20):
        x = generate_data(np.random.default_rng(seed), 64, dtype, "powers")
        p = np.multiply.accumulate(x.astype(np.float64))
        assert (p == np.multiply.accumulate(x)).all()  # exact in the type itself, in order
        dips += bool(subnormal(p.astype(x.dtype)).any())
        assert np.abs(p).min() >= float(finfo(dtype).smallest_subnormal)
        assert np.abs(p).max() < float(finfo(dtype).max) * 2.0 ** -SIGNIFICAND_BITS[dtype]
    assert dips >= 15


def test_a_spec_names_the_dtypes_that_flush(budget):
    """-ftz=true flushes float32 and never float64 (docs/explanation/special-values.md): such a max declares
    'flush:float32'; 'flush' (every dtype) refuses its float64, 'keep' its float32."""
    def max_ftz_float32(x):
        with np.errstate(invalid="ignore"):
            return np.maximum.accumulate(read_as_zero(x) if x.dtype == np.float32 else x)

    rules = {"flush:float32": ("pass", None), "flush": ("fail", "float64"),
             "keep": ("fail", "float32")}
    for rule, (status, where) in rules.items():
        r = check_property(_target(max_ftz_float32, op="max", subnormals=rule),
                           "floats within bound", budget)
        assert r.status == status, (rule, r.diagnosis)
        if where:
            assert r.cause == "PRECISION" and r.smallest_case["dtype"] == where
    assert "'flush:float32' where float32 alone flushes" in r.diagnosis
    assert flushed_dtypes("flush:float32,bfloat16") == ("float32", "bfloat16")
    assert flushed_dtypes("keep") == () and "float64" in flushed_dtypes("flush")
    for bad in ("flush:", "flush:int32", "drop", "keep:float32"):
        with pytest.raises(ValueError, match="flush:DTYPE"):
            TargetSpec(subnormals=bad)


# Subnormals read as zero is said only where the same input, scaled by a power of two that
# leaves none (no rounding changed), is right, and a longer input with them fits it too.



def _bound(locator, n, dtype, seed):
    failure = TABLE["floats within bound"].check(resolve(locator), Case(n, dtype, "subnormal",
                                                                        seed))
    return failure.told() if isinstance(failure, Untold) else failure


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_scaled_input_leaves_no_subnormal_and_rounds_as_the_input(dtype):
    x = Case(1000, dtype, "subnormal", 3).data("add")
    for least in (True, False):
        y, s = scaled_out(x, least)
        assert not subnormal(y).any() and s > 0
        assert np.array_equal(np.ldexp(x.astype(np.float64), s), y.astype(np.float64))
    assert scaled_out(x, True)[1] < scaled_out(x, False)[1]
    assert scaled_out(np.zeros(4, dtype), True) is None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(3))
def test_flushing_subnormals_is_told_where_the_scaled_input_is_right(dtype, seed):
    failure = _bound("scancheck.controls.declared:subnormal_inputs_read_as_zero", 1000, dtype,
                     seed)
    assert failure.cause == Cause.PRECISION and "subnormals read as zero" in failure.diagnosis


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(3))
def test_an_underflow_guard_is_less_range_not_subnormals_read_as_zero(dtype, seed):
    """Block totals below 1e-18 read as zero: normal numbers, which the input scaled out of
    the subnormals still holds, and scaled to about 1 does not."""
    failure = _bound("scancheck.controls.bands:underflow_guard_too_high", 1000, dtype, seed)
    assert failure.cause == Cause.PRECISION and "less exponent range" in failure.diagnosis
    assert "subnormals read as zero (DAZ" not in failure.diagnosis


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(3))
def test_a_dropped_offset_on_tiny_data_is_a_logic_error_not_a_flush(dtype, seed):
    """Reading subnormals as zero allows errors of n times the smallest normal: a dropped
    offset of tiny data fits it, but the scaled input is wrong too, and so is 'steps' data."""
    failure = _bound("scancheck.controls.bands:blocked_sum_losing_its_last_offset", 5063,
                     dtype, seed)
    assert failure.cause == Cause.LOGIC and "'steps' data" in failure.diagnosis


@pytest.mark.parametrize("seed", range(3))
def test_float16_block_totals_underflowing_are_lost_precision_not_a_flush(seed):
    """Block totals carried in float16: on data around float32's smallest normal they
    underflow to zero, which reading subnormals as zero seemed to explain; scaled to about
    1 they keep float16's 11 bits: lost precision, as the whole check tells it."""
    failure = _bound("scancheck.controls.sums:lower_precision_intermediate", 1000, "float32",
                     seed)
    assert failure.cause == Cause.PRECISION and "significand bits" in failure.diagnosis
    assert "subnormals read as zero (DAZ" not in failure.diagnosis


def test_a_zero_is_no_subnormal_to_a_failure_within_the_any_order_bound():
    """Exact sums rounded to bfloat16 through float32, declared accumulated in float64: the
    tie below misses the declared accumulator's bound while inside the any-order bound,
    which a scan reading subnormals as zero may also reach.  A zero among the inputs is no
    subnormal: the failure is told as the cast, not sent to the scalings that tell flushing
    (where an input without subnormals scales by 2**0 and is told again, without end)."""
    from ml_dtypes import bfloat16

    from scancheck.engine.properties.values import judge_output

    def cast_back(x, axis=-1):
        return np.add.accumulate(x, axis=axis, dtype=np.float64).astype(np.float32).astype(
            x.dtype)

    target = Target("cast back", cast_back, TargetSpec(dtypes=("bfloat16",),
                                                       accumulates=(("bfloat16", "float64"),)))
    x = np.array([0.0, 1.0, 2.0**-8, 2.0**-30], dtype=bfloat16)
    failure = judge_output(target, Case(4, "bfloat16", "integers", 0), x, cast_back(x))
    assert failure is not None and failure.cause == Cause.PRECISION, failure
    assert "rounded twice" in failure.diagnosis and "subnormal" not in failure.diagnosis
