"""Error metrics, rigorous bounds and the per-output verdict."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.core.operators import sequential_scan
from scancheck.kernels.registry import VARIANTS
from scancheck.oracle.bounds import (
    Verdict,
    abs_sums,
    certified,
    classify,
    gamma,
    log_depths,
    may_overflow,
    overflow_threshold,
    sequential_depths,
    ulp,
)
from scancheck.oracle.exact import exact_scan


def test_gamma_is_higham_and_refuses_depths_past_one_over_u():
    assert gamma(1, "float32") == pytest.approx(2.0**-24 / (1 - 2.0**-24))
    assert gamma(0, "float64") == 0
    assert gamma(2**24, "float32") == np.inf  # no finite bound: nothing can be ruled out
    with pytest.raises(ValueError, match="depth"):
        gamma(-1, "float32")
    with pytest.raises(ValueError, match="dtype='int32'"):
        gamma(3, "int32")


def test_depth_helpers():
    assert sequential_depths(4).tolist() == [0, 1, 2, 3]
    assert sequential_depths(4, inclusive=False).tolist() == [0, 0, 1, 2]
    assert log_depths(5).tolist() == [0, 1, 2, 2, 3]


def test_ulp_and_abs_sums():
    assert ulp(np.array([1.0]), "float32")[0] == 2.0**-23
    assert abs_sums(np.array([1.0, -2.0, np.inf], dtype=np.float32)).tolist()[:2] >= [1.0, 3.0]


def _ulp_by_definition(v: float, dtype: str) -> float:
    """2**(e - p + 1) for |v| in [2**e, 2**(e+1)), e at least the smallest normal's; NaN at
    infinities and NaN: one float at a time, with math.frexp."""
    info = np.finfo(dtype)
    if not math.isfinite(v):
        return math.nan
    e = max(math.frexp(abs(v))[1] - 1, int(info.minexp)) if v else int(info.minexp)
    return math.ldexp(1.0, e - int(info.nmant))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@given(data=st.data())
def test_ulp_is_the_spacing_of_its_dtype_at_each_value(dtype, data):
    """The vectorised ulp (NumPy's spacing, the largest finite value mended) against its
    definition, value by value: zeros, subnormals, the largest finite, infinities, NaN."""
    info = np.finfo(dtype)
    edges = [0.0, -0.0, float(info.smallest_subnormal), float(info.tiny), float(info.max),
             -float(info.max), math.inf, -math.inf, math.nan, 1.0, 3.0]
    x = np.asarray(data.draw(st.lists(st.sampled_from(edges) | st.floats(
        width=int(info.bits), allow_subnormal=True), max_size=40)), dtype=dtype)
    want = np.array([_ulp_by_definition(float(v), dtype) for v in x], dtype=np.float64)
    np.testing.assert_array_equal(ulp(x, dtype), want)


@given(x=st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=60),
       noise=st.lists(st.sampled_from([0.0, 0.0, 1e-7, -3e-4, 1.0, math.inf, math.nan]),
                      min_size=60, max_size=60))
def test_classify_applies_its_rules_output_by_output(x, noise):
    """Each output's error, ulps and verdict are those its definition gives, one output at a
    time, whether or not a special is among the outputs (classify's two paths)."""
    x = np.asarray(x, dtype=np.float32)
    exact = exact_scan(x)
    with np.errstate(all="ignore"):
        got = (exact.astype(np.float64) * (1 + np.asarray(noise[:x.size]))).astype(np.float32)
    rep = classify(x, got, sequential_depths(x.size))
    for k in range(x.size):
        e, g = float(exact[k]), float(got[k])
        if math.isfinite(g):
            err, half = abs(g - e), _ulp_by_definition(e, "float32") / 2
            assert rep.abs_err[k] == err and rep.ulp_err[k] == err / (2 * half)
            assert rep.rel_err[k] == (err / abs(e) if e else (math.inf if err else 0.0))
            want = (Verdict.EXACT if g == e else Verdict.BEYOND_BOUND if err > rep.bound[k]
                    else Verdict.WITHIN_BOUND)
        else:  # the sums of |x| stay far below float32's overflow: a proven error
            assert rep.abs_err[k] == rep.ulp_err[k] == math.inf and rep.rel_err[k] == 0
            want = Verdict.BEYOND_BOUND
        assert rep.verdicts[k] == want, (k, e, g)


def test_exact_output_within_bound_and_beyond():
    x = np.array([1.0, 2.0**-24, 2.0**-24], dtype=np.float32)
    # Left to right, 1 + 2**-24 ties to 1 twice; the exact third prefix is 1 + 2**-23.
    seq = classify(x, np.array([1.0, 1.0, 1.0], dtype=np.float32), [0, 1, 2])
    assert seq.verdicts.tolist() == [Verdict.EXACT, Verdict.EXACT, Verdict.WITHIN_BOUND]
    assert seq.ulp_err[2] == 1
    wrong = classify(x, np.array([1.0, 1.0, 3.0], dtype=np.float32), [0, 1, 2])
    assert wrong.verdict == Verdict.BEYOND_BOUND and wrong.beyond.tolist() == [2]
    assert wrong.row()["verdict"] == "beyond bound"


def test_a_wrong_nan_or_infinity_is_beyond_the_bound():
    x = np.array([1.0, np.inf], dtype=np.float32)
    rep = classify(x, np.array([1.0, np.nan], dtype=np.float32), [0, 1])
    assert rep.verdicts.tolist() == [Verdict.EXACT, Verdict.BEYOND_BOUND]
    ok = classify(x, np.array([1.0, np.inf], dtype=np.float32), [0, 1])
    assert ok.verdict == Verdict.EXACT


def test_report_summary_numbers():
    x = np.ones(4, dtype=np.float64)
    rep = classify(x, np.array([1, 2, 3, 5], dtype=np.float64), sequential_depths(4))
    assert rep.max_abs == 1 and rep.l2 == 1 and rep.rms == 0.5 and rep.worst_index == 3


def test_an_error_past_a_tiny_bound_is_the_worst_without_a_warning():
    """Far wrong where the bound is tiny (a sum of two values near 1e-300, which may round):
    its fraction of the bound is past the largest float, an infinity, told without NumPy's
    overflow warning."""
    x = np.array([1e-300, 3e-300], dtype=np.float64)
    rep = classify(x, np.array([1e-300, 1e300]), [0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rep.worst_index == 1 and rep.bound_fraction[1] == np.inf


def test_classify_refuses_mismatched_shapes_and_integer_data():
    with pytest.raises(ValueError, match="shape"):
        classify(np.ones(3, dtype=np.float32), np.ones(2, dtype=np.float32), 0)
    with pytest.raises(ValueError, match="takes float32, float64, float16, bfloat16"):
        classify(np.ones(3, dtype=np.int32), np.ones(3, dtype=np.int32), 0)


# -- the exactness certificate ------------------------------------------------------------


def test_the_certificate_ends_where_some_order_would_round():
    f32 = np.float32
    # 2**23 + 2**23 + 1 = 2**24 + 1 rounds in float32; 2**23 + (2**23 - 2) + 1 does not.
    assert certified(np.array([2**23, 2**23, 1], dtype=f32)).tolist() == [True, True, False]
    assert certified(np.array([2**23, 2**23 - 2, 1], dtype=f32)).all()
    # Multiples of 2**-2 reach only 2**22 before the last bit is lost.
    assert certified(np.array([0.25, 2**21, 2**21], dtype=f32)).tolist() == [True, True, False]
    assert certified(np.array([1.0, np.nan, 1.0], dtype=f32)).tolist() == [True, False, False]
    assert certified(np.array([5.0, 7.0], dtype=f32), inclusive=False).tolist() == [True, True]
    assert certified(np.zeros(0, dtype=np.float64)).shape == (0,)
    with pytest.raises(ValueError, match="dtype 'int32'"):
        certified(np.arange(3, dtype=np.int32))


@st.composite
def _certified_data(draw):
    """Dyadic data from the 'dyadic' distribution, the one the 'certified exact' property draws."""
    from scancheck.engine.strategies import generate_data

    n = draw(st.integers(1, 600))
    dtype = draw(st.sampled_from(["float32", "float64", "float16", "bfloat16"]))
    return generate_data(np.random.default_rng(draw(st.integers(0, 2**32 - 1))), n, dtype, "dyadic")


_ADD_VARIANTS = [n for n, v in VARIANTS.items() if not v.racy and "add" in v.operators]


@given(_certified_data(), st.sampled_from(_ADD_VARIANTS), st.sampled_from([32, 64, 256]))
def test_every_model_is_exact_wherever_the_certificate_holds(x, name, block):
    """The certificate is a theorem about every summation order; here it meets scancheck's
    own summation networks: none of them may differ from the exact sum where it holds."""
    var = VARIANTS[name]
    block = max(block, var.min_block)
    cap = var.capacity(block, var.resolve_params(None)) if var.capacity else x.size
    x = x[:cap]
    where = certified(x, var.inclusive)
    got = var.build_model(x.size, block).run(x)
    want = exact_scan(x, inclusive=var.inclusive)
    assert where[: min(x.size, 8)].any() or not where.any()
    np.testing.assert_array_equal(got[where], want[where])


@given(_certified_data(), st.randoms(use_true_random=False))
def test_any_summation_order_is_exact_wherever_the_certificate_holds(x, rnd):
    where = np.flatnonzero(certified(x))
    want = exact_scan(x)
    for k in rnd.sample(list(where), min(5, where.size)):
        terms = list(x[: k + 1])
        while len(terms) > 1:  # a random tree: combine two random partial sums at a time
            a = terms.pop(rnd.randrange(len(terms)))
            b = terms.pop(rnd.randrange(len(terms)))
            terms.append(x.dtype.type(a + b))
        assert terms[0] == want[k]


MAX32 = float(np.finfo(np.float32).max)


def test_an_overflow_some_order_makes_is_rounding_not_a_logic_error():
    """numpy.cumsum overflows max + max, IEEE-correctly; the exact prefixes after it are finite."""
    x = np.array([MAX32, MAX32, -MAX32, 1], dtype=np.float32)
    with np.errstate(over="ignore"):
        seq = classify(x, np.cumsum(x), sequential_depths(4))
    assert seq.verdicts.tolist() == [Verdict.EXACT, Verdict.EXACT, Verdict.OVERFLOWED,
                                     Verdict.OVERFLOWED]
    assert seq.verdict.label == "overflowed" and seq.row()["overflowed"] == 2
    assert seq.rms == 0 and np.isfinite(seq.row()["mean ulps"])
    # A tree order gets NaN from (max + max) + (-max + -max), where the exact sum is 0.
    y = np.array([MAX32, MAX32, -MAX32, -MAX32], dtype=np.float32)
    tree = np.array([MAX32, np.inf, np.inf, np.nan], dtype=np.float32)
    assert classify(y, tree, log_depths(4)).verdicts.tolist()[3] == Verdict.OVERFLOWED


def test_an_infinity_where_no_order_can_overflow_is_beyond_the_bound():
    x = np.array([1e30, 1e30, 1], dtype=np.float32)
    got = np.array([1e30, np.inf, np.inf], dtype=np.float32)
    rep = classify(x, got, sequential_depths(3))
    assert rep.beyond.tolist() == [1, 2]
    assert not may_overflow(x, sequential_depths(3)).any()


def test_may_overflow_where_the_magnitudes_reach_the_threshold_and_only_there():
    x = np.array([MAX32 / 4, -MAX32 / 4, MAX32 / 4, MAX32 / 2, np.inf], dtype=np.float32)
    reach = may_overflow(x, sequential_depths(5))
    # Magnitudes, not sums: the fourth prefix sums to max / 2, its magnitudes to 1.25 max,
    # past the threshold; a prefix with an infinite input is IEEE's to fix, not rounding's.
    assert reach.tolist() == [False, False, False, True, False]
    assert overflow_threshold("float32") > MAX32 and overflow_threshold("float64") == np.inf
    assert may_overflow(np.array([1.7e308, 1.7e308]), [0, 1]).tolist() == [False, True]


_ORDERED_DATA = ("overflow", "wide", "subnormal", "zeros", "cancellation", "uniform", "dyadic")


@st.composite
def _edge_data(draw, max_n=40):
    """Data near the overflow threshold, subnormals, signed zeros, or arbitrary finite floats."""
    from scancheck.engine.strategies import finite_floats, generate_data

    dtype = draw(st.sampled_from(["float32", "float64"]))
    dist = draw(st.sampled_from(_ORDERED_DATA + ("any finite",)))
    if dist == "any finite":
        return draw(finite_floats(dtype, 1, max_n))
    n = draw(st.integers(1, max_n))
    return generate_data(np.random.default_rng(draw(st.integers(0, 2**32 - 1))), n, dtype, dist)


@given(_edge_data(), st.randoms(use_true_random=False))
def test_every_summation_order_is_judged_rounding(x, rnd):
    """Scans whose every output is summed by its own random tree (any pairing of partial sums,
    so depth at most k-1), three of them per input: none may be called beyond the bound."""
    n = x.size
    want = exact_scan(x)
    for _ in range(3):
        got = np.empty_like(x)
        with np.errstate(over="ignore", invalid="ignore"):
            for k in range(n):
                terms = list(x[: k + 1])
                while len(terms) > 1:
                    a = terms.pop(rnd.randrange(len(terms)))
                    b = terms.pop(rnd.randrange(len(terms)))
                    terms.append(x.dtype.type(a + b))
                got[k] = terms[0]
        rep = classify(x, got, sequential_depths(n), exact=want)
        assert rep.verdict != Verdict.BEYOND_BOUND, (x, got, rep.beyond)


@given(_edge_data(max_n=600), st.sampled_from(_ADD_VARIANTS), st.sampled_from([32, 64, 256]))
def test_every_model_is_judged_rounding_at_the_edges_of_the_float_range(x, name, block):
    var = VARIANTS[name]
    block = max(block, var.min_block)
    cap = var.capacity(block, var.resolve_params(None)) if var.capacity else x.size
    x = x[:cap]
    with np.errstate(over="ignore", invalid="ignore"):
        got = var.build_model(x.size, block).run(x)
    rep = classify(x, got, sequential_depths(x.size, var.inclusive), inclusive=var.inclusive)
    assert rep.verdict != Verdict.BEYOND_BOUND, (name, rep.beyond[:5])


def test_flushing_subnormals_is_within_the_bound_only_where_declared():
    tiny = np.finfo(np.float32).smallest_normal
    sub = np.float32(tiny / 4)
    x = np.array([tiny, sub, sub, -tiny], dtype=np.float32)
    daz = np.cumsum(np.where(np.abs(x) < tiny, 0, x)).astype(np.float32)
    depths = sequential_depths(4)
    assert classify(x, daz, depths).verdict == Verdict.BEYOND_BOUND
    assert classify(x, daz, depths, flush=True).verdict == Verdict.WITHIN_BOUND
    # A grid finer than the smallest normal certifies nothing for a flushing scan.
    assert certified(x).all() and certified(x, flush=True).tolist() == [True, False, False, False]
    assert certified(np.array([1.0, 2.0], np.float32), flush=True).all()


def test_only_the_overflows_some_order_can_make_are_rounding():
    """Where the exact sum overflows, a finite answer must be near the threshold and of its
    sign; -inf needs negative terms that can reach it, NaN terms of both signs."""
    x = np.array([MAX32, MAX32], dtype=np.float32)
    verdict = {label: classify(x, np.array([MAX32, v], dtype=np.float32), sequential_depths(2)
                               ).verdicts[1] for label, v in
               (("inf", np.inf), ("max", MAX32), ("zero", 0.0), ("-max", -MAX32),
                ("-inf", -np.inf), ("nan", np.nan))}
    assert verdict == {"inf": Verdict.EXACT, "max": Verdict.OVERFLOWED, "zero": Verdict.BEYOND_BOUND,
                       "-max": Verdict.BEYOND_BOUND, "-inf": Verdict.BEYOND_BOUND,
                       "nan": Verdict.BEYOND_BOUND}


@pytest.mark.parametrize("x", [[1, np.inf, -np.inf], [1, np.inf, 2], [MAX32, -np.inf, MAX32]])
def test_a_finite_answer_past_an_infinite_input_is_never_rounding(x):
    """An infinite input stays infinite (or meets the other sign's: NaN) in every order: a
    finite output after one is proven wrong, whatever terms could overflow beside it."""
    x = np.array(x, dtype=np.float32)
    got = np.array([x[0], x[1], 5.0], dtype=np.float32)
    assert classify(x, got, sequential_depths(3)).verdicts[2] == Verdict.BEYOND_BOUND


def test_an_overflow_that_meets_an_infinity_of_the_other_sign_is_rounding():
    """float16 partial sums that overflow to +inf before a -inf arrives give NaN where the
    exact prefix is -inf: rounding (some order overflows).  Without terms that can reach the
    threshold, the same NaN is a proven error, and so is +inf once a -inf is in the prefix."""
    big = np.array([60000, 60000, -np.inf, 1], dtype=np.float16)
    with np.errstate(over="ignore", invalid="ignore"):
        got = sequential_scan(big)
    assert np.isnan(got[2:]).all() and np.isneginf(exact_scan(big)[2:]).all()
    assert classify(big, got, sequential_depths(4)).verdicts.tolist()[2:] == [Verdict.OVERFLOWED] * 2
    small = np.array([1, 2, -np.inf, 1], dtype=np.float16)
    nan = np.array([1, 3, np.nan, np.nan], dtype=np.float16)
    assert classify(small, nan, sequential_depths(4)).verdicts.tolist()[2:] == [Verdict.BEYOND_BOUND] * 2
    pinf = got.copy()
    pinf[2:] = np.inf
    assert classify(big, pinf, sequential_depths(4)).verdicts.tolist()[2:] == [Verdict.BEYOND_BOUND] * 2
