"""The operator vocabulary: identities, evaluation order, NaN rules, CUDA names."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scancheck.core.arrays import as_dtype, same_bits
from scancheck.core.combines import INTERVAL_ERROR
from scancheck.core.dtypes import is_float
from scancheck.core.operators import (
    FAMILIES,
    OPERATORS,
    get_operator,
    interval_expected,
    interval_input,
    sequential_scan,
)
from scancheck.oracle.exact import exact_scan


@pytest.mark.parametrize("name", list(OPERATORS))
def test_identity_is_neutral_on_both_sides(name):
    op = OPERATORS[name]
    for dt in op.dtypes:
        e = op.identity(dt)
        x = interval_input(5) if name == "interval" else (
            np.array([True, False, True, True, False]) if dt == "bool" else
            np.arange(1, 6, dtype=dt) if op.width == 1 else np.arange(10, dtype=dt).reshape(5, 2))
        np.testing.assert_array_equal(op.combine(np.broadcast_to(e, x.shape), x), x)
        np.testing.assert_array_equal(op.combine(x, np.broadcast_to(e, x.shape)), x)


def test_recurrence_pair_composes_earlier_then_later():
    op = get_operator("recurrence")
    x = np.array([[2.0, 3.0]])
    y = np.array([[5.0, 7.0]])
    # y_1 = 2*y0 + 3, y_2 = 5*y_1 + 7 = 10*y0 + 22
    assert op.combine(x, y).tolist() == [[10.0, 22.0]]
    assert op.combine_exact((2, 3), (5, 7)) == (10, 22)


def test_interval_monoid_joins_only_adjacent_intervals():
    op = get_operator("interval")
    a = np.array([[0, 3], [0, 3], [0, 3]], dtype=np.int32)
    b = np.array([[4, 9], [5, 9], list(INTERVAL_ERROR)], dtype=np.int32)
    assert op.combine(a, b).tolist() == [[0, 9], list(INTERVAL_ERROR), list(INTERVAL_ERROR)]


def test_max_propagates_nan_and_keeps_the_earlier_of_equals():
    op = get_operator("max")
    a = np.array([np.nan, 1.0, -0.0, 2.0], dtype=np.float32)
    b = np.array([3.0, np.nan, 0.0, 1.0], dtype=np.float32)
    got = op.combine(a, b)
    assert np.isnan(got[0]) and np.isnan(got[1]) and np.signbit(got[2]) and got[3] == 2.0


def test_min_mirrors_max():
    got = get_operator("min").combine(np.array([1, 5]), np.array([3, 2]))
    assert got.tolist() == [1, 2]


def test_cuda_names():
    assert get_operator("add").cuda_functor_type("float64") == "scancheck::Add<double>"
    assert get_operator("recurrence").cuda_element("float32") == "scancheck::Pair<float>"
    assert get_operator("interval").cuda_element("int32") == "scancheck::Interval"


def test_sequential_scan_and_interval_expectation_agree():
    for inclusive in (True, False):
        got = sequential_scan(interval_input(9), "interval", inclusive)
        np.testing.assert_array_equal(got, interval_expected(9, inclusive))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: get_operator("xor"), "operator='xor' is unknown; allowed: add"),
        (lambda: get_operator("interval").identity("float32"), "allowed: int32"),
        (lambda: sequential_scan(np.zeros((3, 3)), "add"), "must be 1-D"),
        (lambda: sequential_scan(np.zeros(3), "recurrence"), r"shape \(n, 2\)"),
        (lambda: sequential_scan(np.zeros(3, dtype=np.complex64), "add"),
         "x: dtype='complex64' is not supported with operator 'add'"),
        (lambda: interval_input(0), "n=0"),
    ],
)
def test_bad_arguments_name_what_is_allowed(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_integer_products_wrap_and_float_products_are_not_rounded_once():
    x = np.array([2**20, 2**20, 3], dtype=np.int32)
    np.testing.assert_array_equal(exact_scan(x, "mul"), [2**20, 0, 0])  # 2**40 wraps to 0
    with pytest.raises(ValueError, match="judged against a bound"):
        exact_scan(np.ones(3, np.float32), "mul")


def _drawn(dt, rng):
    """Elements of a scalar operator at ``dt``: a leading -0.0, zeros of both signs, NaN,
    infinities and subnormals among normal values (floats); the type's extremes (integers)."""
    if dt == "bool":
        return rng.integers(0, 2, 64).astype(bool)
    dtype = as_dtype(dt)
    if not is_float(dt):
        info = np.iinfo(dtype)
        x = rng.integers(int(info.min), int(info.max), 64, dtype=dtype, endpoint=True)
        x[:4] = [info.max, info.max, info.min, 1]
        return x
    specials = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-40, -1e-310, 3.0, -0.5]
    x = np.concatenate([specials, rng.standard_normal(54) * rng.choice([1e-3, 1.0, 1e3], 54)])
    x = x.astype(np.float64).astype(dtype)
    rng.shuffle(x[1:])
    return x


@pytest.mark.parametrize("name", list(OPERATORS))
def test_family_and_ufunc_columns_agree_with_the_combine(name):
    """Every row fills ``family`` with a key of FAMILIES and ``ufunc`` with a ufunc whose
    accumulate is the inclusive scan by its combine (NaN for NaN), its identity the row's,
    or None; a sum, a product and an order are what their family says on every dtype."""
    op = OPERATORS[name]
    assert op.family in FAMILIES
    assert op.ufunc is None or isinstance(op.ufunc, np.ufunc)
    if op.family in ("sum", "product", "order", "logsumexp"):
        assert op.width == 1 and op.elements == "scalars" and op.ufunc is not None
    else:
        assert op.ufunc is None
    rng = np.random.default_rng(sum(map(ord, name)))
    for dt in (op.dtypes if op.width == 1 else ()):
        x = _drawn(dt, rng)
        by_combine = x.copy()
        with np.errstate(all="ignore"):
            for k in range(1, x.shape[0]):
                by_combine[k] = op.combine(by_combine[k - 1:k], x[k:k + 1])[0]
            got = op.ufunc.accumulate(x, dtype=x.dtype)
            pairs = op.combine(x[:-1], x[1:])
        assert same_bits(got, by_combine).all(), (name, dt)
        if op.ufunc.identity is not None:
            assert same_bits(np.asarray(op.ufunc.identity, x.dtype)[None],
                             op.identity(dt)[None]).all(), (name, dt)
        if op.family == "order":  # it selects one of its operands, bit for bit
            assert (same_bits(pairs, x[:-1]) | same_bits(pairs, x[1:])).all(), (name, dt)
        if op.family in ("sum", "product") and not is_float(dt):
            ints = [int(v) for v in x[:4]]
            want = (sum if op.family == "sum" else math.prod)(ints)
            folded = int(op.identity(dt))
            assert folded == (0 if op.family == "sum" else 1)
            for v in ints:
                folded = op.combine_exact(folded, v)
            lo = int(np.iinfo(x.dtype).min)
            assert folded == want
            assert int(by_combine[3]) == (want - lo) % 2 ** (8 * x.dtype.itemsize) + lo  # wraps
