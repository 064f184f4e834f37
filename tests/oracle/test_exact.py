"""The exact oracle: the fast limb path, mpmath, and rationals agree; IEEE specials and
integer wrap-around; correct rounding."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.core.arrays import as_dtype
from scancheck.core.dtypes import FLOAT_DTYPES, INT_DTYPES
from scancheck.core.operators import sequential_scan
from scancheck.engine.strategies import finite_floats, generate_pairs, recurrence_pairs
from scancheck.oracle.bounds import Verdict, classify, sequential_depths
from scancheck.oracle.exact import (
    exact_recurrence,
    exact_scan,
    exact_scan_axis,
    exact_scan_mpmath,
    recurrence_enclosure,
    recurrence_magnitudes,
    round_dyadic,
    round_fraction,
    working_precision,
)


def _fraction_prefix(x: np.ndarray) -> list[Fraction]:
    acc, out = Fraction(0), []
    for v in x.astype(np.float64).tolist():
        acc += Fraction(v)
        out.append(acc)
    return out


def _values(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)  # exact for every float type; NaN compares equal below


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@given(data=st.data())
def test_fast_path_equals_mpmath_on_arbitrary_finite_floats(dtype, data):
    x = data.draw(finite_floats(dtype, max_size=40))
    np.testing.assert_array_equal(_values(exact_scan(x)), _values(exact_scan_mpmath(x)))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@given(data=st.data())
def test_mpmath_sums_are_exact_and_rounded_once(dtype, data):
    x = data.draw(finite_floats(dtype, max_size=25))
    expected = [round_fraction(q, dtype) for q in _fraction_prefix(x)]
    np.testing.assert_array_equal(_values(exact_scan_mpmath(x)), np.array(expected))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@given(st.lists(st.integers(-2**12, 2**12), min_size=2, max_size=300), st.integers(-8, 2))
def test_half_precision_sums_round_once_to_nearest_even(dtype, ints, shift):
    """Integers beyond the type's 11 or 8 bits, summed: the fast path's one rounding (to odd at
    53 bits, then to p) against rationals rounded once."""
    x = (np.array(ints, dtype=np.float64) * 2.0**shift).astype(as_dtype(dtype))
    expected = [round_fraction(q, dtype) for q in _fraction_prefix(x)]
    np.testing.assert_array_equal(_values(exact_scan(x)), np.array(expected))


@given(st.lists(st.integers(-2**20, 2**20), min_size=2, max_size=60),
       st.integers(-30, 30))
def test_fast_path_rounds_sums_wider_than_53_bits_correctly(mantissas, shift):
    # float32 values spread over ~30 binades: the int64 path converts sums of up to 62 bits.
    x = (np.array(mantissas, dtype=np.float64) * 2.0**shift).astype(np.float32)
    x[::3] *= np.float32(2.0**25)
    expected = [round_fraction(q, "float32") for q in _fraction_prefix(x)]
    np.testing.assert_array_equal(exact_scan(x), np.array(expected, dtype=np.float32))


def test_long_wide_range_input_takes_the_limb_path_and_agrees_with_mpmath():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(70_000) * np.exp2(rng.integers(-120, 120, 70_000))).astype(np.float32)
    idx = np.r_[0:50, 65_530:65_545, 69_990:70_000]
    np.testing.assert_array_equal(exact_scan(x)[idx], exact_scan_mpmath(x)[idx])


def test_an_input_summed_again_gets_a_fresh_copy_of_its_own_exact_sums():
    """Large inputs' exact sums are kept by their bits: the same input again gets them as a
    new array (writing into one leaves the next alone), one bit changed gets its own, and
    the rows of a 2-D input theirs."""
    from scancheck.oracle.exact import KEPT_FROM

    x = np.random.default_rng(3).standard_normal(KEPT_FROM + 5).astype(np.float32)
    want = exact_scan_mpmath(x)
    for _ in range(3):  # summed, then kept: each call's array is its own to write into
        got = exact_scan(x.copy())
        assert np.array_equal(got, want)
        got[:] = 0
    again = exact_scan(x)
    y = x.copy()
    y[7] = np.nextafter(y[7], np.float32(np.inf))
    assert np.array_equal(exact_scan(y), exact_scan_mpmath(y)) and not np.array_equal(
        exact_scan(y), again)
    rows = np.stack([x, y])
    assert np.array_equal(exact_scan_axis(rows), np.stack([again, exact_scan(y)]))
    assert np.array_equal(exact_scan(x, inclusive=False)[1:], again[:-1])


def test_working_precision_covers_exponent_range_and_length():
    x = np.array([2.0**-1074, 2.0**1000], dtype=np.float64)
    assert working_precision(x) >= 1000 + 1074 + 1  # bits of 2**1000 + 2**-1074


@pytest.mark.parametrize(
    "values, expected",
    [
        ([1.0, np.nan, 2.0], [1.0, np.nan, np.nan]),
        ([np.inf, 1.0, -np.inf, 1.0], [np.inf, np.inf, np.nan, np.nan]),
        ([-np.inf, 5.0], [-np.inf, -np.inf]),
        ([-0.0, -0.0, 0.0], [-0.0, -0.0, 0.0]),
        ([3e38, 3e38, -3e38], [3e38, np.inf, 3e38]),
    ],
)
def test_ieee_specials(values, expected):
    got = exact_scan(np.array(values, dtype=np.float32))
    want = np.array(expected, dtype=np.float32)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_exact_overflow_to_infinity_rounds_like_ieee():
    # 3e38 + 3e38 exceeds float32's largest value by far: round to nearest gives +inf,
    # and the exact running sum comes back into range after subtracting.
    got = exact_scan(np.array([3e38, 3e38, -3e38], dtype=np.float32))
    assert got[1] == np.inf and got[2] == np.float32(3e38)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integers_wrap_modulo_two_to_the_bits(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.max, 1, info.min, info.max, info.max], dtype=dtype)
    got = exact_scan(x)
    bits = np.dtype(dtype).itemsize * 8
    low = info.min  # 0 for unsigned types
    wrapped = [((s - low) % 2**bits) + low for s in np.cumsum(x.astype(object))]
    assert got.tolist() == wrapped


def test_exclusive_scan_is_the_inclusive_shifted_with_the_identity():
    x = np.array([1.5, 2.25, -4.0], dtype=np.float32)
    assert exact_scan(x, inclusive=False).tolist() == [0.0, 1.5, 3.75]
    assert exact_scan(x, "max", inclusive=False).tolist() == [-np.inf, 1.5, 2.25]


@given(st.integers(-2**70, 2**70), st.integers(-1200, 200))
def test_round_dyadic_agrees_with_fraction_rounding(man, exp):
    for dtype in ("float32", "float64"):
        q = Fraction(man) * Fraction(2) ** exp
        got = round_dyadic(man, exp, dtype)
        # float(q) rounds a Fraction correctly to float64; float32 via numpy from exact.
        if dtype == "float64":
            try:
                want = float(q)
            except OverflowError:
                want = float("inf") if q > 0 else float("-inf")
            assert got == want
        else:
            assert np.float32(got) == np.float32(round_fraction(q, "float32"))


@given(recurrence_pairs(12, "float64"))
def test_exact_recurrence_matches_the_sequential_recurrence_in_rationals(pairs):
    got = exact_recurrence(pairs)
    y = Fraction(0)
    for k, (a, b) in enumerate(pairs.tolist()):
        y = Fraction(a) * y + Fraction(b)
        assert got[k, 1] == round_fraction(y, "float64")


@pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16"])
@given(data=st.data())
def test_both_components_of_the_recurrence_are_its_rationals_rounded_once(dtype, data):
    """Arbitrary finite floats, subnormals and the whole exponent range: the product and y_k
    each equal the Fractions' value rounded once (the oracle carries them otherwise)."""
    flat = data.draw(finite_floats(dtype, 2, 24), label="x")
    pairs = flat[:flat.size // 2 * 2].reshape(-1, 2)
    got = exact_recurrence(pairs)
    p, y = Fraction(1), Fraction(0)
    for k, (a, b) in enumerate(pairs.tolist()):
        p, y = Fraction(a) * p, Fraction(a) * y + Fraction(b)
        want = [round_fraction(q, dtype) for q in (p, y)]
        assert got[k].astype(np.float64).tolist() == want, (k, got[k], want)


@given(st.data())
def test_the_recurrence_enclosure_contains_the_exact_answer(data):
    """Outward-rounded intervals: the exact rational y_k lies in [lo, hi] at every k, and the
    magnitudes' recurrence below its bound, growing or contracting, float32 or float64."""
    n = data.draw(st.integers(1, 150), label="n")
    dtype = data.draw(st.sampled_from(["float32", "float64"]), label="dtype")
    contracting = data.draw(st.sampled_from([True, False, None]), label="contracting")
    pairs = data.draw(recurrence_pairs(n, dtype, contracting), label="pairs")
    lo, hi = recurrence_enclosure(pairs)
    mags = recurrence_magnitudes(pairs)
    y = m = Fraction(0)
    for k, (a, b) in enumerate(pairs.astype(np.float64).tolist()):
        y = Fraction(a) * y + Fraction(b)
        m = Fraction(abs(a)) * m + Fraction(abs(b))
        assert Fraction(lo[k]) <= y <= Fraction(hi[k]), k
        assert m <= Fraction(mags[k]), k


def test_the_recurrence_enclosure_is_far_narrower_than_float32_rounding_at_a_million():
    pairs = generate_pairs(np.random.default_rng(5), 10**6, "float32")
    lo, hi = recurrence_enclosure(pairs)
    mags = recurrence_enclosure(np.abs(pairs).astype(np.float64))[1]
    assert np.isfinite(lo).all() and (lo <= hi).all()
    assert ((hi - lo) < 1e-6 * np.finfo(np.float32).eps * mags).all()


def test_sequential_float32_scan_of_the_practicals_data_is_within_its_bound():
    x = np.random.default_rng(0).integers(0, 1000, 1_000_000).astype(np.float32)
    report = classify(x, sequential_scan(x), sequential_depths(x.size), name="sequential")
    assert report.verdict == Verdict.WITHIN_BOUND
    assert 1e3 < report.rms < 1e5  # seed 004's "huge" error is honest rounding
    dropped = x.copy()
    dropped[1000] = 0  # a scan that skips one element
    bad = classify(x, sequential_scan(dropped), sequential_depths(x.size))
    assert bad.verdict == Verdict.BEYOND_BOUND and bad.beyond[0] == 1000


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="x must be 1-D"):
        exact_scan(np.zeros((2, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="x: dtype='complex64' is not supported"):
        exact_scan(np.zeros(3, dtype=np.complex64))


@pytest.mark.parametrize("op", ["add", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_the_scan_of_nothing_is_empty(op, dtype):
    for inclusive in (True, False):
        out = exact_scan(np.zeros(0, dtype=dtype), op, inclusive)
        assert out.shape == (0,) and out.dtype == dtype


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i4", ">i8"])
def test_big_endian_and_strided_input_give_the_native_answer(dtype):
    x = np.arange(1, 13, dtype=dtype)[::3]
    want = np.cumsum(x.astype(x.dtype.newbyteorder("=")))
    np.testing.assert_array_equal(exact_scan(x), want)
    assert exact_scan(x).dtype.isnative


@given(st.lists(st.tuples(st.integers(2**23, 2**24 - 1), st.integers(0, 28), st.booleans()),
                min_size=2, max_size=40))
def test_sums_past_2_to_the_53_units_round_once_to_float32(terms):
    # Exponents within 29 binades; sums past 2**53 units, where a float64 conversion of the
    # integer would round first and a second rounding to float32 could go wrong.
    terms = [(2**24 - 1, 28, False)] * 3 + terms  # the running sum passes 2**53 units at once
    x = np.array([(-m if neg else m) * 2.0 ** (e - 23) for m, e, neg in terms], dtype=np.float32)
    expected = [round_fraction(q, "float32") for q in _fraction_prefix(x)]
    np.testing.assert_array_equal(exact_scan(x), np.array(expected, dtype=np.float32))


@given(st.lists(st.tuples(st.integers(1, 2**24 - 1), st.integers(0, 40), st.booleans()),
                min_size=2, max_size=40))
def test_sums_over_60_binades_are_exact(terms):
    # float32 spread over ~60 binades: past one 64-bit word.
    terms = [(2**24 - 1, 40, False), (1, 0, True)] + terms
    x = np.array([(-m if neg else m) * 2.0 ** (e - 60) for m, e, neg in terms], dtype=np.float32)
    expected = [round_fraction(q, "float32") for q in _fraction_prefix(x)]
    np.testing.assert_array_equal(exact_scan(x), np.array(expected, dtype=np.float32))


@pytest.mark.slow
def test_carries_past_2_to_the_23_elements():
    """Values whose low 40 bits are nearly all set, 2**24 of them: an int64 sum of those
    low parts would wrap past 2**23 elements (an exact oracle summing them so would be 16
    off at the end)."""
    big = np.float32((2**24 - 1) * 2.0**-40)  # its low 40 bits nearly all set past `tiny`'s grid
    tiny = np.float32(2.0**-37)
    x = np.full(2**24, big, dtype=np.float32)
    x[0] = tiny
    got = exact_scan(x)
    for k in (2**23 - 1, 2**23 + 5, 2**24 - 1):
        assert got[k] == round_fraction(Fraction(float(tiny)) + k * Fraction(float(big)), "float32")
