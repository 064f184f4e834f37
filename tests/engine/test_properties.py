"""Each property's criterion, the control that only it catches, and how a failing case is
attributed to one cause (logic or precision, NaN handling or logic, varying order or race)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scancheck.controls import declared, operators, sums
from scancheck.core.arrays import as_dtype
from scancheck.core.rules import arg_extreme_scan, extreme_scan
from scancheck.engine.cases import Budget, Case
from scancheck.engine.conformance import check_property
from scancheck.engine.diagnosis import Cause, Reason
from scancheck.engine.properties import TABLE, values
from scancheck.engine.properties.base import Failure, prefix_error
from scancheck.engine.properties.extremes import extreme_agree
from scancheck.engine.properties.nan_rules import finite_twin
from scancheck.targets.resolve import resolve
from scancheck.targets.spec import TargetSpec
from scancheck.targets.target import Target

FLOATS = TargetSpec(dtypes=("float32", "float64"))


def _target(fn, spec=None, fill=None):
    return Target(getattr(fn, "__name__", "fn"), fn, spec or TargetSpec(), output_fill=fill)


def test_the_certificate_alone_catches_a_carry_kept_8_bits_short(budget):
    t = resolve("scancheck.controls.sums:carry_8_bits_short")
    assert check_property(t, "floats within bound", budget).status == "pass"
    r = check_property(t, "certified exact", budget)
    assert r.status == "fail" and r.cause == "PRECISION", r
    assert r.smallest_case["n"] == 513  # the first carried output of tiles of 512
    bits = r.detail["behaves like bits"]
    assert bits in (15, 16, 17) if r.smallest_case["dtype"] == "float32" else bits in (44, 45, 46)


def _nan_read_as_zero_from_65(x):
    out = np.cumsum(x, dtype=x.dtype)
    out[64:][np.isnan(out[64:])] = 0
    return out


@pytest.mark.parametrize("prop, fn", [("certified exact", sums.off_by_one_at_block_boundaries),
                                      ("floats within bound",
                                       sums.off_by_one_at_block_boundaries),
                                      ("nan and inf", _nan_read_as_zero_from_65)])
def test_only_the_failure_reported_is_attributed(prop, fn, budget, monkeypatch):
    """Wrong from n = 65: the ladder finds it past there, the walk takes it down.  Only the
    failure reported is attributed (a steps probe, 16 seeds of data, the input without its
    specials), as it would have been where it was found; and, a logic error found on other
    data than the property's plainest, the one the plain data's walk reaches (the case
    shown where it is told the same)."""
    told = []
    for name in ("_float_failure", "_specials_failure"):
        real = getattr(values, name)
        monkeypatch.setattr(values, name, lambda t, case, *a, real=real:
                            told.append((case.n, case.distribution)) or real(t, case, *a))
    r = check_property(_target(fn, FLOATS), prop, budget)
    case = r.smallest_case
    assert r.status == "fail" and case["n"] >= 65, r
    plain = TABLE[prop].data_for("add")[0]
    assert told[-1] == (case["n"], case["data"]) and (
        len(told) == 1 or len(told) == 2 and told[1][1] == plain and r.cause == "LOGIC"), (told, r)
    assert ("'steps' data" if fn is sums.off_by_one_at_block_boundaries else
            "NaN or infinity not propagated") in r.diagnosis


def test_precision_lost_is_told_from_a_logic_error_without_integer_dtypes(budget):
    """Both break the certificate; only the logic error breaks 'steps' data too."""
    lossy = check_property(resolve("scancheck.controls.sums:lower_precision_intermediate"),
                           "certified exact", budget)
    assert lossy.cause == "PRECISION" and "about 11 significand bits" in lossy.diagnosis
    broken = check_property(_target(sums.off_by_one_at_block_boundaries, FLOATS),
                            "certified exact", budget)
    assert broken.cause == "LOGIC" and "'steps' data" in broken.diagnosis
    assert broken.smallest_case["n"] == 65


def test_a_logic_error_in_nan_data_is_not_blamed_on_nan_handling(budget):
    nan_bug = check_property(resolve("scancheck.controls.declared:max_writing_zero_for_nan"),
                             "nan and inf", budget)
    assert nan_bug.cause == "SPECIALS" and nan_bug.independent
    logic_bug = check_property(resolve("scancheck.controls.sums:dropped_partial_block"), "nan and inf",
                               budget)
    assert logic_bug.cause == "LOGIC" and not logic_bug.independent
    assert "NaNs and infinities replaced by 1" in logic_bug.diagnosis


def _bounded_look_back(x, tile=256, window=1024):
    """A sum of tiles of 256 whose tiles fold the totals of at most 1024 predecessors (the
    GPU control ``bounded_lookback.cu``): past 262,144 elements the oldest tiles are lost."""
    tiles = -(-x.size // tile)
    padded = np.zeros(tiles * tile, x.dtype)
    padded[:x.size] = x
    with np.errstate(all="ignore"):
        local = np.cumsum(padded.reshape(tiles, tile), axis=1, dtype=x.dtype)
        offsets = np.array([local[max(0, t - window):t, -1].sum(dtype=x.dtype)
                            for t in range(tiles)], dtype=x.dtype)
        return (local + offsets[:, None]).ravel()[:x.size]


def test_a_lost_tile_is_a_logic_error_where_the_finite_twin_hides_it_within_the_bound():
    """An infinity in a tile the sum loses: the twin with the infinity made 1 is wrong only by
    the lost tile's total, within the rounding bound at this size; the count of specials is
    exact, so the wrong infinity is that logic error, one diagnosis and not a second."""
    t = _target(_bounded_look_back, TargetSpec(dtypes=("float32",)))
    case = Case(262_401, "float32", "lone specials", 2793664945, drawn=262_657, skip=256)
    x = case.data("add")
    first = int(np.flatnonzero(~np.isfinite(x))[0])
    assert first < 256 and np.isinf(x[first])  # the case's premise: its infinity is lost
    twin = finite_twin(x)
    assert values.judge_output(t, case, twin, t(twin)) is None  # the first twin sees nothing
    told = values.specials_check(t, case).told()
    assert told.cause == Cause.LOGIC and not told.independent, told
    assert told.index == 262_400 and "1 at each NaN or infinity" in told.diagnosis


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_max_wrong_below_some_finite_value_is_a_logic_error_at_an_infinity_too(dtype):
    """-inf gets -1e30: the twin with NaN and infinities made 1 is right, but the twin that
    keeps their order (-inf made the most negative finite value) is wrong too, so the wrong
    infinity is that logic error, not a second cause told as the NaN rule."""
    t = _target(declared.max_started_from_minus_1e30, TargetSpec(op="max", dtypes=(dtype,)))
    # The first case of 'specials' data that opens with -inf: its first output is wrong at
    # the infinity alone.
    case = next(c for c in (Case(8, dtype, "specials", seed) for seed in range(10_000))
                if c.data("max")[0] == -np.inf)
    told = values.specials_check(t, case).told()
    assert told.cause == Cause.LOGIC and not told.independent, told
    assert "the largest finite" in told.diagnosis, told.diagnosis


def _logcumsumexp_naive_at_infinity(x):
    """Right on finite values; where the running value and the input are both +inf,
    m + log1p(exp(-|a - b|)) makes inf - inf: NaN where IEEE's logaddexp is +inf."""
    out = np.logaddexp.accumulate(x, dtype=x.dtype)
    both = np.isposinf(x[1:]) & np.isposinf(out[:-1])
    out[1:][both] = np.nan
    return out


def _logcumsumexp_restarting_past_100(x):
    """Every output past 100 forgets the first 101 inputs (a carry lost between tiles): an
    infinity among them too, so that it shows as a wrong +inf before any value does."""
    out = np.logaddexp.accumulate(x, dtype=x.dtype)
    if x.size > 101:
        out[101:] = np.logaddexp.accumulate(x[101:], dtype=x.dtype)
    return out


def test_a_wrong_special_and_a_wrong_value_of_a_log_sum_exp_are_told_apart(budget):
    """'nan and inf' judges log-sum-exp's specials by its own judge: a wrong NaN that the
    same input with finite values in the specials' place does not show is the specials'
    own (and 'logsumexp within bound' passes); a carry lost between tiles, met as a wrong
    +inf, is told on that twin, and as what it is."""
    spec = TargetSpec(op="logaddexp", dtypes=("float32", "float64"))
    nan_bug = _target(_logcumsumexp_naive_at_infinity, spec)
    res = check_property(nan_bug, "nan and inf", budget)
    assert res.status == "fail" and res.cause == "SPECIALS" and res.independent, res
    assert check_property(nan_bug, "logsumexp within bound", budget).status == "pass"
    lost = check_property(_target(_logcumsumexp_restarting_past_100, spec), "nan and inf",
                          budget)
    assert lost.status == "fail" and lost.cause == "LOGIC" and not lost.independent, lost
    assert "replaced by 0, 0 and -1000" in lost.diagnosis, lost
    assert "a term missing" in lost.diagnosis, lost


def _logcumsumexp_saturating_infinity(x):
    """Right on finite values; +inf stored as the largest float (a saturating store)."""
    out = np.logaddexp.accumulate(x, dtype=x.dtype)
    out[np.isposinf(out)] = np.finfo(x.dtype).max
    return out


def test_a_log_sum_exp_missing_its_infinity_is_no_overflow(budget):
    """A finite value where the prefix holds +inf breaks the specials' rule, not the
    overflow rule (an infinity where no combine overflows): its words ('not +inf where')
    once read as the overflow's ('+inf where'), and told an intermediate out of range."""
    spec = TargetSpec(op="logaddexp", dtypes=("float32", "float64"))
    r = check_property(_target(_logcumsumexp_saturating_infinity, spec), "nan and inf", budget)
    assert r.status == "fail" and r.cause == "SPECIALS" and r.reason == "SPECIALS", r
    assert "not +inf where the prefix has +inf" in r.diagnosis, r
    assert "leaves the float range" not in r.diagnosis, r


def _cumprod_in_8_bit_tiles_of_8_absorbing_infinities(x):
    """A carry kept in 8 bits between tiles of 8 (wrong on any data from n = 9) and a zero
    absorbing the infinities after it (0 * inf is NaN)."""
    out = np.empty_like(x)
    carry = 1.0
    with np.errstate(all="ignore"):
        for lo in range(0, x.shape[0], 8):
            out[lo:lo + 8] = np.multiply.accumulate(x[lo:lo + 8], dtype=x.dtype) * carry
            carry = float(sums.round_to_bits(out[min(lo + 8, x.shape[0]) - 1], 8))
        zero = np.logical_or.accumulate(x == 0)
        nan = np.logical_or.accumulate(np.isnan(x))
    out[zero & ~nan & np.isnan(out)] = 0.0
    return out


def test_a_value_bug_met_first_hides_no_wrong_special_of_a_product(budget):
    """The carry's error shows at n = 9 on any data, before the zero meets an infinity: the
    specials are judged where the prefix holds one, and a rounding-sized error on the twin
    explains no NaN, so both bugs are told, each by its own property."""
    t = _target(_cumprod_in_8_bit_tiles_of_8_absorbing_infinities,
                TargetSpec(op="mul", dtypes=("float32", "float64")))
    specials = check_property(t, "nan and inf", budget)
    assert specials.cause == "SPECIALS" and specials.independent, specials
    assert "a zero and an infinity" in specials.diagnosis
    values = check_property(t, "products within bound", budget)
    assert values.cause == "PRECISION" and "significand bits" in values.diagnosis, values


def _cumprod_with_two_tile_bugs(x):
    """Past one tile of 64, every infinity it should return comes out NaN and the last
    output leaves out its own factor (as controls.sums.sum_with_two_tile_bugs)."""
    with np.errstate(all="ignore"):
        out = np.multiply.accumulate(x, dtype=x.dtype)
    if x.shape[0] > 64:
        out[np.isinf(out)] = np.nan
        out[-1] = out[-2]
    return out


def test_a_value_bug_shown_only_after_a_wrong_special_of_a_product_explains_none(budget):
    """The twin (infinities made finite) is wrong at its last output alone: every wrong NaN
    before it is the specials' own, told beside the value bug."""
    t = _target(_cumprod_with_two_tile_bugs, TargetSpec(op="mul", dtypes=("float32",
                                                                          "float64")))
    specials = check_property(t, "nan and inf", budget)
    assert specials.cause == "SPECIALS" and specials.independent, specials
    assert specials.smallest_case["index"] < specials.smallest_case["n"] - 1, specials


def _product_reading_quiet_nans_as_one(x):
    """A cumprod whose NaN test reads the sign bit too: the quiet NaN is read as 1, and a NaN
    with the sign bit set (x86's default) propagates."""
    with np.errstate(all="ignore"):
        return np.multiply.accumulate(np.where(np.isnan(x) & ~np.signbit(x), x.dtype.type(1),
                                               x), dtype=x.dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_product_telling_nans_apart_by_their_bits_keeps_no_nan_rule(dtype):
    """On an input whose NaNs are all quiet, that product answers as nans='ignore' would; it
    keeps that rule for no other NaN, so it is told as NaNs told apart by their bits (the
    specials' own), not as a contract to declare -- as a sum is (values, nan_rules)."""
    from scancheck.engine.properties.own_rules import _judgement
    from scancheck.oracle.products import judge_products

    t = _target(_product_reading_quiet_nans_as_one, TargetSpec(op="mul", dtypes=(dtype,)))
    x = np.array([1.5, np.nan, 2.0, 3.0], dtype=dtype)
    assert not np.signbit(x[1])
    failure = _judgement(t, x, t(x), judge_products)[2]
    assert failure.cause == Cause.SPECIALS and "told apart by their bits" in failure.diagnosis, (
        failure.diagnosis)
    # A product that reads every NaN as 1 keeps the rule whatever the bits: a contract.
    ones = _target(lambda x: np.multiply.accumulate(np.where(np.isnan(x), x.dtype.type(1), x)),
                   TargetSpec(op="mul", dtypes=(dtype,)))
    failure = _judgement(ones, x, ones(x), judge_products)[2]
    assert failure.cause == Cause.CONTRACT and "declare --nans ignore" in failure.diagnosis, (
        failure.diagnosis)


def test_a_non_deterministic_product_keeping_a_rule_is_not_told_apart_by_its_rounding():
    """A product reading every NaN as 1 that rounds otherwise from run to run (declared
    non-deterministic, as CuPy's and the look-back's are) keeps 'ignore' for every NaN: its
    second run's rounding is no NaN told apart by its bits."""
    from scancheck.engine.properties.own_rules import _judgement
    from scancheck.oracle.products import judge_products

    rng = np.random.default_rng(0)

    def jittery(x):
        y = np.where(np.isnan(x), x.dtype.type(1), x)
        wide = rng.integers(2) == 1  # a reassociated product: other rounding
        return np.multiply.accumulate(y.astype(np.float64) if wide else y).astype(x.dtype)

    t = _target(jittery, TargetSpec(op="mul", dtypes=("float32",), deterministic=False))
    x = np.array([1.1, np.nan, 1.3, 1.7, 1.9, 2.3, 1.01, 1.03, 3.7, 1.11], dtype=np.float32)
    causes = {_judgement(t, x, t(x), judge_products)[2].cause for _ in range(12)}
    assert causes == {Cause.CONTRACT}, causes


def _reordered_sum(x):
    """A correct scan whose rounding order varies: a random tile size each call."""
    tile = int(np.random.default_rng().integers(1, 64))
    out = np.empty_like(x)
    carry = x.dtype.type(0)
    for lo in range(0, x.size, tile):
        local = np.add.accumulate(x[lo:lo + tile], dtype=x.dtype)
        out[lo:lo + tile] = carry + local
        carry = out[min(lo + tile, x.size) - 1]
    return out


def _sometimes_drops(x):
    """Right, or in half its calls past n = 100 the second half of its outputs low by 1 and
    a hundredth of the prefix's magnitude: beyond the bound of any summation order on every
    kind of data the property draws (an error of 1 alone passes as rounding where the data
    are near 1e6 in float32, and that run is then told as varying within the bound)."""
    out = np.cumsum(x, dtype=x.dtype)
    if x.size > 100 and np.random.default_rng().random() < 0.5:
        out[x.size // 2:] -= 1 + np.cumsum(np.abs(x), dtype=x.dtype)[x.size // 2:] / 100
    return out


def _every_other_call_a_little_off():
    """Right, or on every other call past n = 100 its last output 2**-13 high: wrong by
    about as much as a narrower type would round (beyond the bound at the first such n)."""
    calls = iter(range(10**9))

    def scan(x):
        out = np.cumsum(x, dtype=x.dtype)
        if x.size > 100 and next(calls) % 2:
            out[-1] += abs(out[-1]) * x.dtype.type(2**-13) + x.dtype.type(2**-13)
        return out
    return scan


def test_varying_bits_within_the_bound_are_non_determinism_and_wrong_ones_are_logic(budget):
    varying = check_property(_target(_reordered_sum, FLOATS), "deterministic", budget)
    assert varying.cause == "NONDETERMINISM" and varying.independent
    flaky = check_property(_target(_sometimes_drops, FLOATS), "deterministic", budget)
    assert flaky.cause == "LOGIC" and "right in another run" in flaky.diagnosis
    # Wrong in one run and right in the next: a logic error, told without the words of lost
    # precision (which a run's error alone, a narrower type's size, would have drawn).
    off = check_property(_target(_every_other_call_a_little_off(), FLOATS), "deterministic",
                         budget)
    assert off.cause == "LOGIC" and "right in another run" in off.diagnosis, off.diagnosis
    assert "significand bits" not in off.diagnosis and "precision" not in off.diagnosis.replace(
        "no lost precision", "")


def test_a_smallest_case_right_in_another_run_is_an_intermittent_logic_error(budget):
    """A case that fails in some runs only is told so by every value property, as a logic
    error and no attribution by other data; a case that fails in every run is not."""
    from scancheck.engine.diagnosis import INTERMITTENT

    calls = iter(range(10**9))

    def every_other_call(x):
        """Its carry into the second tile of 64 dropped in every other call."""
        out = np.cumsum(x, dtype=x.dtype)
        if next(calls) % 2:
            out[64:] = np.cumsum(x[64:], dtype=x.dtype)
        return out

    flaky = _target(every_other_call)
    dropped = resolve("scancheck.controls.sums:dropped_partial_block")
    for prop in ("integers exact", "certified exact", "floats within bound", "nan and inf"):
        res = check_property(flaky, prop, budget)
        assert res.cause == "LOGIC" and INTERMITTENT in res.diagnosis, (prop, res)
        assert res.smallest_case["reruns right"].endswith(" of 4"), res.smallest_case
        res = check_property(dropped, prop, budget)
        assert res.status == "fail" and INTERMITTENT not in res.diagnosis, (prop, res)


def test_every_property_tries_the_empty_scan_first_where_the_spec_allows_it(budget):
    refusing = resolve("scancheck.controls.sums:scan_refusing_empty_input")
    for prop in ("integers exact", "certified exact", "floats within bound", "nan and inf",
                 "deterministic"):
        r = check_property(refusing, prop, budget)
        assert r.status == "fail" and r.smallest_case["n"] == 0, (prop, r)
    no_empty = _target(sums.scan_refusing_empty_input, TargetSpec(allows_empty=False))
    assert check_property(no_empty, "integers exact", budget).status == "pass"


def test_an_output_left_holding_the_fill_is_named_never_written(budget):
    def skips_last(x):
        out = np.cumsum(x, dtype=x.dtype)
        out.view(np.uint8)[-x.itemsize:] = 0xFF
        return out

    r = check_property(_target(skips_last, TargetSpec(allows_empty=False), fill=0xFF),
                       "integers exact", budget)
    assert r.smallest_case["n"] == 1 and "never written" in r.diagnosis
    assert r.reason == "NEVER_WRITTEN"


def test_an_undeclared_promotion_is_named_with_its_flag(budget):
    r = check_property(_target(lambda x: np.cumsum(x)), "integers exact", budget)  # int32 -> int64
    assert r.cause == "CONTRACT" and r.smallest_case["n"] == 1  # the ladder's first case
    assert ("returns int64 for int32 input: it promotes; declare --promote int32:int64, "
            "or return int32") in r.diagnosis
    declared = TargetSpec(promote=(("int32", "int64"),))
    assert check_property(_target(lambda x: np.cumsum(x), declared), "integers exact",
                          budget).status == "pass"


def test_a_wrong_shape_or_a_narrowing_dtype_is_a_logic_error(budget):
    r = check_property(_target(lambda x: np.cumsum(x).astype(np.int16)), "integers exact",
                       budget)
    assert r.cause == "LOGIC" and "returned dtype int16 for input of dtype int32" in r.diagnosis
    r = check_property(_target(lambda x: np.cumsum(x, dtype=x.dtype)[:-1]), "integers exact",
                       budget)
    assert r.cause == "LOGIC" and "returned shape" in r.diagnosis
    assert "expected dtype" not in r.diagnosis and "and dtype" not in r.diagnosis


def test_equal_zeros_may_come_back_either_way_unless_the_spec_orders_them(budget):
    """A max that follows IEEE 754-2019 (max(-0, +0) = +0) and one that keeps the earlier
    zero both conform by default; declared ordered, only the first does, and the second is
    refused on signed-zero data, told as the zero order it keeps."""
    def ieee_2019_max(x):
        return extreme_scan(x, "max", zeros="ordered")

    either = TargetSpec(op="max", dtypes=("float32", "float64"))
    ordered = replace(either, zeros="ordered")
    for fn in (ieee_2019_max, declared.max_keeping_the_earlier_zero):
        assert check_property(_target(fn, either), "floats within bound", budget).status == "pass"
    assert check_property(_target(ieee_2019_max, ordered), "floats within bound",
                          budget).status == "pass"
    r = check_property(_target(declared.max_keeping_the_earlier_zero, ordered),
                       "floats within bound", budget)
    assert r.status == "fail" and r.cause == "CONTRACT" and r.smallest_case["data"] == "zeros"
    assert r.reason == "UNDECLARED" and r.detail["contract"] == "--zeros either"


def _selecting(compare):
    """A running max or min by ``b if compare(b, a) else a``: ``a`` the running value, ``b``
    the next element."""
    def scan(x):
        out = x.copy()
        for k in range(1, x.size):
            out[k] = x[k] if compare(x[k], out[k - 1]) else out[k - 1]
        return out
    scan.__name__ = f"selecting_by_{compare.__name__}"  # a target's name is its identity
    return scan


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("keeps", ["earlier", "later"])
def test_a_zero_order_kept_is_told_by_the_tie_it_keeps_and_a_functor_that_keeps_it(
        op, keeps):
    """A scan declared zeros='ordered' whose ties of -0 and +0 keep one operand: the
    diagnosis says which, and the functor it names computes the scan's own outputs."""
    import operator
    import re

    strict, loose = (operator.gt, operator.ge) if op == "max" else (operator.lt, operator.le)
    fn = _selecting(strict if keeps == "earlier" else loose)
    # A search of its own: the ladder alone may draw no tie this scan gets wrong.
    spec = TargetSpec(op=op, dtypes=("float32",), zeros="ordered", max_n=2**10)
    r = check_property(_target(fn, spec), "floats within bound", Budget(2))
    assert r.status == "fail" and r.detail["contract"] == "--zeros either", r
    m = re.search(r"ties of zeros (keep|take) the (\w+), as (b ([<>]=?) a) \? b : a does "
                  r"for a running value a and next element b", r.diagnosis)
    assert m and m[2] == keeps, r.diagnosis
    named = _selecting({">": operator.gt, ">=": operator.ge, "<": operator.lt,
                        "<=": operator.le}[m[4]])
    from scancheck.engine.strategies import generate_data

    for seed in range(5):
        x = generate_data(np.random.default_rng(seed), 300, "float32", "zeros")
        assert (np.signbit(named(x)) == np.signbit(fn(x))).all() and (named(x) == fn(x)).all()


def test_an_open_zero_order_allows_only_a_zero_sign_the_prefix_holds():
    """Per output: -0 and +0 are equal, but a max returns an operand, so a zero answer may
    come back only with a sign some zero of its prefix has (an exclusive output's prefix
    ends before it; read as zero, a subnormal's sign counts, and its own bits may return)."""
    x = np.array([-0.0, -1.0, 0.0, -0.0], np.float32)
    inclusive = TargetSpec(op="max", dtypes=("float32",))
    plus, minus = np.zeros(4, np.float32), np.full(4, -0.0, np.float32)
    assert extreme_agree(inclusive, x, plus, False)[0].tolist() == [False, False, True, True]
    assert extreme_agree(inclusive, x, minus, False)[0].all()
    exclusive = replace(inclusive, inclusive=False)
    assert extreme_agree(exclusive, x, plus, False)[0][1:].tolist() == [False, False, True]
    assert extreme_agree(exclusive, x, minus, False)[0][1:].all()
    tiny = np.array([-1e-40], np.float32)  # a subnormal, read as -0 where flushed
    for got, ok in ((0.0, False), (-0.0, True), (-1e-40, True)):
        assert extreme_agree(inclusive, tiny, np.array([got], np.float32), True)[0][0] == ok


def test_nan_handling_is_checked_as_the_spec_declares(budget):
    ignoring = TargetSpec(op="min", dtypes=("float32", "float64"), nans="ignore")
    fmin = _target(lambda x: np.fmin.accumulate(x), ignoring)
    assert check_property(fmin, "nan and inf", budget).status == "pass"
    r = check_property(_target(declared.min_propagating_nan, ignoring), "nan and inf", budget)
    assert r.status == "fail" and r.cause == "CONTRACT" and "nans='ignore'" in r.diagnosis
    assert "declare --nans propagate" in r.diagnosis


def test_overflow_is_rounding_only_where_some_order_can_overflow(budget):
    """numpy.cumsum overflows on 'overflow' data and conforms; a guard that returns infinity
    at half the largest float is refused, with the reach of the prefix in its diagnosis."""
    assert check_property(resolve("numpy.cumsum"), "floats within bound", budget).status == "pass"
    r = check_property(resolve("scancheck.controls.declared:overflow_guard_too_low"),
                       "floats within bound", budget)
    assert r.status == "fail" and r.cause == "PRECISION" and r.smallest_case["data"] == "overflow"
    assert "no summation order can overflow" in r.diagnosis


def test_subnormals_read_as_zero_are_named_and_conform_where_declared(budget):
    t = resolve("scancheck.controls.declared:subnormal_inputs_read_as_zero")
    r = check_property(t, "floats within bound", budget)
    assert r.status == "fail" and r.cause == "PRECISION" and r.smallest_case["data"] == "subnormal"
    assert "subnormals read as zero" in r.diagnosis
    flushing = replace(t.spec, subnormals="flush")
    assert check_property(_target(t.fn, flushing), "floats within bound", budget).status == "pass"
    # Declaring it takes nothing from other errors: a dropped block is still refused.
    broken = _target(sums.dropped_partial_block, replace(FLOATS, subnormals="flush"))
    assert check_property(broken, "floats within bound", budget).cause == "LOGIC"


def test_accumulation_precision_is_proved_not_guessed():
    """numpy's float16 and bfloat16 cumsum round every partial sum to the type; a scan that
    accumulates in float32 and rounds once is correctly rounded at every output."""
    from scancheck.engine.properties import accumulation_precision

    spec = TargetSpec(dtypes=("float16", "bfloat16"))
    narrow = _target(lambda x: np.cumsum(x, dtype=x.dtype), spec)
    wide = _target(lambda x: np.cumsum(x.astype(np.float32)).astype(x.dtype), spec)
    for dt in ("float16", "bfloat16"):
        found = accumulation_precision(narrow, dt)
        assert found[f"accumulation {dt}"].startswith(f"some partial sums rounded to {dt}")
        assert found[f"max err {dt} (ulps)"] >= 1
        assert accumulation_precision(wide, dt)[f"accumulation {dt}"].startswith("float32")
        assert accumulation_precision(wide, dt)[f"max err {dt} (ulps)"] == 0
    # float32: numpy's sequential float32 against float64 accumulation rounded once.
    f32 = TargetSpec(dtypes=("float32",))
    assert accumulation_precision(_target(lambda x: np.cumsum(x, dtype=x.dtype), f32),
                                  "float32")["accumulation float32"].startswith("some partial")
    double = _target(lambda x: np.cumsum(x, dtype=np.float64).astype(x.dtype), f32)
    assert accumulation_precision(double, "float32")["accumulation float32"].startswith("float64")


def _kahan(x):
    """A compensated (Kahan) sum in the input's own type: correctly rounded wherever every
    partial sum is exact in float64, off by the type's precision where large terms cancel."""
    out, s, c = np.empty_like(x), x.dtype.type(0), x.dtype.type(0)
    with np.errstate(all="ignore"):
        for k, v in enumerate(x):
            y = v - c
            t = s + y
            c, s = (t - s) - y, t
            out[k] = s
    return out


def test_a_compensated_sum_is_not_told_to_declare_a_wider_accumulator(budget):
    """A Kahan sum in float32 is correctly rounded on the accumulation probe, as a float64
    accumulation is, but only the float64 one is told to declare --accumulates: declared,
    the Kahan sum fails the bound of a float64 accumulation on cancelling data."""
    from scancheck.engine.conformance import declared_accumulation
    from scancheck.engine.properties.summaries import Accumulation, accumulation_precision

    spec = TargetSpec(dtypes=("float32",))
    double = _target(lambda x: np.cumsum(x, dtype=np.float64).astype(x.dtype), spec)
    for fn, outcome in ((_kahan, Accumulation.CORRECTED), (double.fn, Accumulation.WIDER)):
        found = accumulation_precision(_target(fn, spec), "float32", top=2**16)
        assert found.outcome == outcome, found
        declared_accumulation(spec, "float32", found)
        advised = "declare --accumulates float32:float64" in found["accumulation float32"]
        assert advised == (outcome == Accumulation.WIDER), found
        followed = _target(fn, replace(spec, accumulates=(("float32", "float64"),),
                                       max_n=4096))
        result = check_property(followed, "floats within bound", budget)
        assert (result.status == "pass") == advised, result


def test_product_accumulation_precision_is_proved_on_factors_of_small_odd_parts():
    """A cumprod rounding every partial product to the type is told apart; one that
    multiplies in the wider type and rounds once is correctly rounded everywhere, and so is
    any order of the wider multiplications (a tree here)."""
    from scancheck.core.operators import sequential_scan
    from scancheck.engine.properties import accumulation_precision

    def tree(x):  # Hillis-Steele in float64: another order, the same exact products
        y = x.astype(np.float64)
        d = 1
        while d < y.size:
            y[d:] = y[d:] * y[:-d].copy()
            d *= 2
        return y.astype(x.dtype)

    spec = TargetSpec(op="mul", dtypes=("float16", "bfloat16", "float32"))
    narrow = _target(lambda x: sequential_scan(x, "mul"), spec)
    for dt in ("float16", "bfloat16", "float32"):
        found = accumulation_precision(narrow, dt)
        assert found[f"accumulation {dt}"].startswith(f"some partial products rounded to {dt}")
        assert found[f"max err {dt} (ulps)"] >= 1
        wide = accumulation_precision(_target(tree, spec), dt)
        assert wide[f"accumulation {dt}"].startswith("float"), wide
        assert wide[f"max err {dt} (ulps)"] == 0


def test_a_promotion_is_declared_or_refused(budget):
    """numpy.cumsum without dtype= returns int64 for int8 input: a logic error unless the spec
    declares it, and then the oracle scans in int64 (no wrap at 8 bits)."""
    plain = TargetSpec(dtypes=("int8", "int16"))
    r = check_property(_target(np.cumsum, plain), "integers exact", budget)
    assert r.status == "fail" and "declare --promote int8:int64" in r.diagnosis
    declared = replace(plain, promote=(("int8", "int64"), ("int16", "int64")))
    assert check_property(_target(np.cumsum, declared), "integers exact", budget).status == "pass"
    wraps = _target(lambda x: np.cumsum(x, dtype=x.dtype).astype(np.int64), declared)
    r = check_property(wraps, "integers exact", budget)
    assert r.status == "fail" and "promotion must come before the first add" in r.diagnosis


def test_an_integer_sum_is_told_accumulated_in_a_float_type_only_where_it_is_that_sum():
    """The words hold the output to the float running sum bit for bit: a sum that leaves out
    an input, whose outputs are float32 values near 2**24 too, is not told so."""
    spec = TargetSpec(dtypes=("int32",))
    x = np.array([2**24, 2, 2, 3], np.int32)
    want = np.cumsum(x, dtype=np.int32)

    def told(got):
        failure = Failure(Cause.LOGIC, "differs from the exact scan", 3, got[3], want[3],
                          reason=Reason.WRONG_VALUE)
        values._kept_in(_target(np.cumsum, spec), x, got, want, failure, narrower=False)
        return failure.diagnosis

    floated = np.cumsum(x.astype(np.float32)).astype(np.int32)
    assert "as if accumulated in float32" in told(floated)
    assert told(np.r_[want[:3], want[2]].astype(np.int32)) == "differs from the exact scan"


def test_bool_sums_are_taken_in_the_promoted_type_and_bool_extremes_in_bool(budget):
    """A running or and a running and are max and min scans of booleans; a sum of booleans
    is a count, in the type the spec promotes bool to (in bool, + would be an or)."""
    count = _target(lambda x: np.cumsum(x), TargetSpec(dtypes=("bool",),
                                                      promote=(("bool", "int64"),)))
    assert check_property(count, "integers exact", budget).status == "pass"
    ored = _target(lambda x: np.cumsum(x, dtype=bool).astype(np.int64), count.spec)
    r = check_property(ored, "integers exact", budget)
    assert r.status == "fail" and "(a logical or), widened to int64" in r.diagnosis
    assert r.smallest_case["n"] == 2  # the second true is the first wrong count
    for op, ufunc in (("max", np.logical_or), ("min", np.logical_and)):
        t = _target(ufunc.accumulate, TargetSpec(op=op, dtypes=("bool",)))
        assert check_property(t, "integers exact", budget).status == "pass"
        flipped = _target(lambda x, u=ufunc: ~u.accumulate(~x), t.spec)  # the other one
        assert check_property(flipped, "integers exact", budget).status == "fail"


def test_accumulation_precision_says_undetermined_where_no_prefix_passes_2_to_the_p():
    from scancheck.engine.properties import accumulation_precision

    small = _target(lambda x: np.cumsum(x, dtype=x.dtype), TargetSpec(dtypes=("float32",),
                                                                      max_n=20_000))
    assert accumulation_precision(small, "float32")["accumulation float32"].startswith(
        "undetermined")


def test_long_recurrences_are_checked_rigorously_past_the_rationals_reach():
    """At 100,000 pairs (exact rationals stop at 300): a right scan by another association
    (doubling) passes, and a scan wrong only past 1024 pairs fails with operand order."""
    from scancheck.core.operators import get_operator
    from scancheck.engine.cases import Case
    from scancheck.engine.properties import TABLE

    op = get_operator("recurrence")

    def doubling(x):
        out = x.copy()
        d = 1
        with np.errstate(all="ignore"):
            while d < out.shape[0]:
                out[d:] = op.combine(out[:-d], out[d:])
                d *= 2
        return out

    spec = TargetSpec(op="recurrence", dtypes=("float32",))
    case = Case(100_000, "float32", "uniform", seed=3)
    assert TABLE["recurrence"].check(Target("doubling", doubling, spec), case) is None
    wrong = TABLE["recurrence"].check(Target("late", operators.long_blocks_in_the_wrong_order,
                                             spec), case)
    assert wrong is not None and wrong.index == 1024 and "operand order" in wrong.diagnosis


# -- a target that writes into its input --------------------------------------------------


def test_the_input_writing_controls_are_refused_with_that_cause_alone():
    """Zeroing the input and returning zeros, or adding 1 to the last input and the last
    output, is the right scan of what the target leaves behind: judged on the input as it
    was, every property that runs it refuses it for the write, and for nothing else."""
    from scancheck.engine.cases import Budget
    from scancheck.engine.conformance import check

    for name in ("zeroing_its_input", "adding_one_to_its_last_input_and_output"):
        rep = check(resolve(f"scancheck.controls.sums:{name}"), budget=Budget(0.3))
        verdict = rep.verdict
        assert verdict.cause.name == "INPUT_WRITTEN" and not verdict.also, verdict.line
        assert verdict.line.startswith("writes into its input: x[")
        assert "after the call (smallest case n=1" in verdict.line
        failing = {r.name for r in rep.results if r.status == "fail"}
        assert failing == {"integers exact", "certified exact", "floats within bound",
                           "nan and inf", "deterministic"}, rep.rows()
        assert all(r.cause == "INPUT_WRITTEN" for r in rep.results if r.status == "fail")


def _recurrence(x):
    from scancheck.core.operators import sequential_scan

    return sequential_scan(x, "recurrence")


#: Per value property: a spec it runs on, and a right scan for that spec.
_RIGHT = {
    "integers exact": (TargetSpec(dtypes=("int32",)), lambda x: np.cumsum(x, dtype=x.dtype)),
    "certified exact": (TargetSpec(dtypes=("float32",)), lambda x: np.cumsum(x, dtype=x.dtype)),
    "floats within bound": (TargetSpec(op="max", dtypes=("float64",)), np.maximum.accumulate),
    "nan and inf": (TargetSpec(dtypes=("float16",)), lambda x: np.cumsum(x, dtype=x.dtype)),
    "deterministic": (TargetSpec(dtypes=("float32",)), lambda x: np.cumsum(x, dtype=x.dtype)),
    "recurrence": (TargetSpec(op="recurrence", dtypes=("float32",)), _recurrence),
    "rows": (TargetSpec(op="mul", dtypes=("float32", "int32"), axis="arg"),
             lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype)),
    "products within bound": (TargetSpec(op="mul", dtypes=("float64",)),
                              lambda x: np.cumprod(x, dtype=x.dtype)),
    "logsumexp within bound": (TargetSpec(op="logaddexp", dtypes=("float32",)),
                               np.logaddexp.accumulate),
    "indices": (TargetSpec(op="min", dtypes=("float32",), indices=True),
                lambda x: arg_extreme_scan(x, "min")),
}


def _zeroes(x):
    x[...] = 0


def _adds_one_to_the_last(x):
    if x.size:
        x[(-1,) * x.ndim] += 1


@pytest.mark.parametrize("prop", list(_RIGHT))
def test_every_value_property_refuses_a_target_that_writes_into_its_input(prop):
    """The right scan of what the target leaves in its input, after zeroing it or adding 1 to
    its last element, conforms where the expected answer follows the input; here it is
    refused for the write, by every property that runs the target on values."""
    from scancheck.engine.cases import Budget

    spec, right = _RIGHT[prop]
    for write in (_zeroes, _adds_one_to_the_last):
        def leaves(x, *axis, write=write):
            write(x)
            return right(x, *axis)

        r = check_property(_target(leaves, spec), prop, Budget(0.3, max_n=4096))
        assert r.status == "fail" and r.cause == "INPUT_WRITTEN", (prop, write, r)
        assert " after the call" in r.diagnosis and "input index" in r.smallest_case
        same = check_property(_target(right, spec), prop, Budget(0.05, max_n=64))
        assert same.status == "pass", (prop, same)


def _logaddexp_rounding_each_output_up(x):
    """The stable scan (np.logaddexp subtracts the larger operand), each output then moved
    up by 64 ulps: imprecise, and finite wherever the answer is."""
    out = np.logaddexp.accumulate(x, dtype=x.dtype)
    with np.errstate(all="ignore"):
        return out + np.spacing(out) * 64


@pytest.mark.parametrize("fn, overflows", [
    (operators.logcumsumexp_through_exp, True), (_logaddexp_rounding_each_output_up, False)])
def test_a_log_sum_exp_is_told_it_overflows_only_where_it_does(budget, fn, overflows):
    """Beside lost precision, a log-sum-exp taken through exp is told its +inf past
    log(max), on an input of two such values; one that subtracts the larger operand never
    is."""
    spec = TargetSpec(op="logaddexp", dtypes=("float32",))
    r = check_property(_target(fn, spec), "logsumexp within bound", budget)
    assert r.status == "fail" and r.cause == "PRECISION"
    assert ("+inf on [89.0, 89.0] (float32)" in r.diagnosis) == overflows, r.diagnosis


def _nan_first_read_as_zero(x):
    """A sum right everywhere but at output 0 of an input that starts with NaN."""
    out = np.cumsum(x, dtype=x.dtype)
    if x.size and np.isnan(x[0]):
        out[0] = 0
    return out


def test_a_failure_at_an_early_output_is_cut_to_the_prefix_that_shows_it():
    """Data drawn anew at each smaller n start with NaN at some n only; the failing input's
    own first element shows the bug alone, and that is the case told."""
    spec = TargetSpec(dtypes=("float32", "float64"))
    r = check_property(_target(_nan_first_read_as_zero, spec), "nan and inf",
                       Budget(2, max_n=4096))
    assert r.status == "fail" and r.smallest_case["n"] == 1 and r.minimal
    assert np.isnan(Case(1, r.smallest_case["dtype"], r.smallest_case["data"],
                         r.smallest_case["seed"], r.smallest_case.get("drawn", 0)).data("add")[0])


def _case_data(told: dict) -> np.ndarray:
    return Case(told["n"], told["dtype"], told["data"], told["seed"], told.get("drawn", 0),
                told.get("skip", 0)).data("add")


def test_a_nan_ignored_is_told_on_the_shortest_tail_that_shows_it():
    """fmax ignores a NaN after a number: the two elements [x, nan] show it, whatever values
    the prefix walk left before them."""
    spec = TargetSpec(op="max", dtypes=("float32", "float64"))
    r = check_property(_target(np.fmax.accumulate, spec), "nan and inf", Budget(2, max_n=4096))
    assert r.status == "fail" and r.cause == "CONTRACT" and r.smallest_case["n"] == 2, r
    x = _case_data(r.smallest_case)
    assert not np.isnan(x[0]) and np.isnan(x[1])


def _nans_zeroed(x):
    out = np.cumsum(x, dtype=x.dtype)
    out[np.isnan(out)] = 0
    return out


def test_a_tail_told_as_another_cause_is_not_the_smallest_case():
    """[nan] alone reads as nancumsum's contract (the identity while the prefix is NaN); a
    NaN zeroed after a number refutes it, and the case told is the shortest tail that does."""
    r = check_property(_target(_nans_zeroed, FLOATS), "nan and inf", Budget(2, max_n=4096))
    assert r.status == "fail" and r.cause == "SPECIALS" and r.smallest_case["n"] == 2, r
    assert np.isnan(np.cumsum(_case_data(r.smallest_case))[-1])


def test_a_bug_of_some_sizes_is_not_cut_below_them():
    """A wrong output only where n % 64 == 7 and n > 64: a prefix of the failing input has
    another size, and passes; the n told is one of the band."""
    def band(x):
        out = np.cumsum(x, dtype=x.dtype)
        if x.size > 64 and x.size % 64 == 7:
            out[3] += 1
        return out

    r = check_property(_target(band, TargetSpec(dtypes=("int32",))), "integers exact",
                       Budget(2, max_n=1024))
    assert r.status == "fail" and r.smallest_case["n"] % 64 == 7 and "drawn" not in r.smallest_case


@pytest.mark.parametrize("accumulates", [(), (("float32", "float64"),)])
def test_a_bound_failure_keeps_the_error_allowed_only_where_the_bound_is_the_criterion(
        accumulates):
    """The any-order bound at the failing output is what a reproducer may hold a new value
    to, unless a declared accumulator holds the output to a tighter bound of its own."""
    from scancheck.oracle.exact import exact_scan

    x = np.random.default_rng(3).uniform(-1, 1, 200).astype(np.float32)
    t = Target("t", lambda v: v, TargetSpec(dtypes=("float32",), accumulates=accumulates))
    want = exact_scan(x)
    got = want.copy()
    got[100:] += np.float32(1)  # a term added: beyond every bound
    failure = values.bound_failure(t, x, got, want)
    assert failure is not None and failure.index == 100
    assert (failure.allowed is None) == bool(accumulates)
    if not accumulates:
        assert 0 < failure.allowed < 1 and "allowed error" in failure.where()


def _clamped(x):
    """An integer sum that clamps each prefix to the type's range: a saturating add."""
    info = np.iinfo(x.dtype)
    return np.clip(np.cumsum(x.astype(object)), info.min, info.max).astype(x.dtype)


def _wrapped_off_by_one_past_the_limit(x):
    """Two's complement, one too small wherever a prefix left the type's range."""
    with np.errstate(over="ignore"):
        out = np.cumsum(x, dtype=x.dtype)
    info = np.iinfo(x.dtype)
    past = np.cumsum(x.astype(object))
    out[(past > info.max) | (past < info.min)] -= 1
    return out


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_an_integer_sum_stuck_at_the_types_limit_is_told_a_saturating_add(dtype):
    """At the type's limit where the prefix's sum lies past it: a saturating add, said so;
    a wrong answer past the limit that is no limit is not told one."""
    spec = TargetSpec(dtypes=(dtype,))
    budget = Budget(5.0, max_n=4096)
    sat = check_property(Target("clamped", _clamped, spec), "integers exact", budget)
    assert sat.status == "fail" and sat.diagnosis.endswith("which wraps (a saturating add?)")
    got = sat.smallest_case["got"]
    assert got in (np.iinfo(dtype).max, np.iinfo(dtype).min), sat.smallest_case
    off = check_property(Target("off", _wrapped_off_by_one_past_the_limit, spec),
                         "integers exact", budget)
    assert off.status == "fail" and "saturating" not in off.diagnosis, off.diagnosis


def test_an_error_as_large_as_the_prefix_is_said_so_not_as_a_power_two_to_the_minus_zero():
    assert prefix_error(5) == "relative error 2**-5 of the prefix's magnitude"
    for bits in (0, -1, -3):
        assert prefix_error(bits) == "an error as large as the prefix's magnitude or more"


@pytest.mark.parametrize("dtype, narrow", [("float32", "float16"), ("float32", "bfloat16"),
                                           ("float64", "float32")])
def test_a_sum_kept_in_a_narrower_type_is_told_which(dtype, narrow):
    """A sum whose every output is a value of a narrower type, some inputs not, is named
    after that type; one that loses precision otherwise (a float16 carry between tiles of
    8, its outputs no float16 values) is not."""
    def kept_narrow(x):
        t = as_dtype(narrow)
        return np.cumsum(x.astype(t), dtype=t).astype(x.dtype)

    def narrow_carry(x):
        out = np.cumsum(x, dtype=x.dtype)
        for lo in range(8, x.size, 8):
            out[lo:] += np.float16(out[lo - 1]).astype(x.dtype) - out[lo - 1]
        return out

    spec = TargetSpec(dtypes=(dtype,))
    budget = Budget(seconds=2)
    told = check_property(_target(kept_narrow, spec), "floats within bound", budget)
    assert told.cause == "PRECISION" and (
        f"every output is a {narrow} value where some inputs or exact prefixes are not: as "
        f"if summed or stored in {narrow}") in told.diagnosis, told
    other = check_property(_target(narrow_carry, spec), "floats within bound", budget)
    assert other.status == "fail" and "every output is a" not in other.diagnosis, other


def test_a_sum_kept_in_a_narrower_type_is_named_on_inputs_of_that_type_too():
    """Integers below 2048 are float16 values, their sums past 2048 mostly not: a float32 sum
    kept in float16 returns float16 values where the exact prefixes are not, and is named
    so; the right float32 sum of the same input is exact, and a running max (float16
    values too, copied from the inputs, far from the sums) names nothing."""
    from scancheck.oracle.bounds import narrower_type
    from scancheck.oracle.exact import exact_scan

    x = np.random.default_rng(5).integers(0, 2048, 64).astype(np.float32)
    want = exact_scan(x)
    kept = np.cumsum(x.astype(np.float16), dtype=np.float16).astype(np.float32)
    assert narrower_type(x, kept, want) == "float16"
    assert narrower_type(x, np.cumsum(x, dtype=np.float32), want) is None
    assert narrower_type(x, np.maximum.accumulate(x), want) is None


def test_a_failure_at_an_output_with_no_values_there_names_the_output_alone():
    """A checked overflow read off output 1 (it raised there): no got=None, expected=None."""
    from scancheck.engine.diagnosis import Reason
    from scancheck.engine.properties.base import Failure

    raised = Failure(Cause.LOGIC, "checks overflow", 1, reason=Reason.WRONG_VALUE)
    assert raised.where() == {"index": 1}
    wrong = Failure(Cause.LOGIC, "differs", 1, 3, 4, reason=Reason.WRONG_VALUE)
    assert wrong.where() == {"index": 1, "got": 3, "expected": 4}
