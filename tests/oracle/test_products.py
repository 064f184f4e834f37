"""The product-scan judge (scancheck.oracle.products): correct cumprods pass in every float type,
a product kept in fewer bits does not, and IEEE's zeros, signs, infinities and NaN are
exact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.core.dtypes import FLOAT_DTYPES
from scancheck.engine.cases import Case
from scancheck.oracle.products import judge_products


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 3000), inclusive=st.booleans())
def test_sequential_cumprod_is_within_the_bound(dtype, seed, n, inclusive):
    x = Case(n, dtype, "factors", seed).data("mul")
    with np.errstate(all="ignore"):
        got = np.multiply.accumulate(x, dtype=x.dtype)
    if not inclusive:
        got = np.r_[np.ones(1, x.dtype), got[:-1]]
    judged = judge_products(x, got, inclusive)
    assert judged.ok.all(), (judged.reason[~judged.ok][:1], np.flatnonzero(~judged.ok)[:3])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_product_rounded_to_fewer_bits_is_beyond_the_bound(dtype):
    x = Case(300, dtype, "factors", 3).data("mul")
    x[np.abs(x) > 4] = 1  # stay in range: every output bounded
    m, e = np.frexp(np.multiply.accumulate(x))
    got = np.ldexp(np.round(m * 2.0**12) / 2.0**12, e).astype(x.dtype)
    judged = judge_products(x, got)
    assert not judged.ok.all()
    # The first factors are exact in every order (the certificate), the rest bounded.
    reasons = {r.split(" (")[0] for r in judged.reason[~judged.ok]}
    assert reasons == {"differs from the exact product where every order of multiplication is "
                       "exact", "beyond the rounding bound of any order of multiplication"}


def test_zeros_signs_infinities_and_nan_are_exact():
    x = np.array([2.0, -0.0, 3.0, np.inf, 5.0], dtype=np.float32)
    right = np.array([2.0, -0.0, -0.0, np.nan, np.nan], dtype=np.float32)
    assert judge_products(x, right).ok.all()
    for k, wrong in ((1, 0.0), (2, 0.0), (3, -np.inf)):
        bad = right.copy()
        bad[k] = wrong
        assert not judge_products(x, bad).ok[k]
    y = np.array([-2.0, np.inf, -1.0], dtype=np.float32)
    assert judge_products(y, np.array([-2.0, -np.inf, np.inf], np.float32)).ok.all()
    assert not judge_products(y, np.array([-2.0, np.inf, np.inf], np.float32)).ok[1]


def test_an_overflow_only_some_orders_make_is_allowed_and_one_none_make_is_not():
    big = float(np.finfo(np.float32).max) ** 0.5 * 4  # big * big overflows, big * big / big not
    x = np.array([big, big, 1 / big / 16], dtype=np.float32)
    exact = np.float32(big / 16)
    assert judge_products(x, np.array([x[0], np.inf, np.inf], np.float32)).ok.all()
    assert judge_products(x, np.array([x[0], np.inf, exact], np.float32)).ok.all()
    small = np.array([1.5, 1.5, 1.5], dtype=np.float32)
    assert not judge_products(small, np.array([1.5, np.inf, np.inf], np.float32)).ok[1]


def test_the_reference_is_the_product_to_float64_precision():
    x = np.array([1.5, -2.0, 0.25, 3.0], dtype=np.float32)
    reference = judge_products(x, np.multiply.accumulate(x)).reference
    np.testing.assert_array_equal(reference, [1.5, -3.0, -0.75, -2.25])
