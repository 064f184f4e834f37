"""Batched inputs: every shape class and layout is drawn, views are what they claim, and the
'rows' property judges every row of them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.controls import rows
from scancheck.core.dtypes import DTYPES
from scancheck.engine.cases import Budget, Case
from scancheck.engine.conformance import check_property
from scancheck.engine.diagnosis import diagnose
from scancheck.engine.layouts import LAYOUTS, SHAPES, batch, laid_out, memory_of
from scancheck.engine.properties.rows import rows_check
from scancheck.engine.strategies import generate_data
from scancheck.oracle.exact import exact_scan, exact_scan_axis
from scancheck.targets.spec import TargetSpec
from scancheck.targets.target import Target


def test_every_shape_class_and_layout_is_drawn():
    seen, scattered = set(), set()
    for seed in range(400):
        b = batch(Case(200, "float32", "uniform", seed))
        assert -b.x.ndim <= b.axis < b.x.ndim and b.x.ndim >= 2
        seen.add((b.shape_class, b.layout))
        if not b.x.flags.c_contiguous:
            scattered.add(b.layout)
    assert {s for s, _ in seen} == set(SHAPES) and {la for _, la in seen} == set(LAYOUTS)
    # Every layout but C order and an offset reaches the target as a non-contiguous view.
    assert scattered == set(LAYOUTS) - {"C", "offset"}


@given(st.integers(0, 2**32 - 1), st.sampled_from(LAYOUTS), st.integers(1, 3))
def test_laid_out_keeps_every_value_in_a_buffer_of_its_own(seed, layout, ndim):
    rng = np.random.default_rng(seed)
    x = rng.integers(-9, 9, size=rng.integers(1, 4, size=ndim)).astype(np.int32)
    y = laid_out(x, memory_of(rng, layout, ndim))
    assert y.shape == x.shape and np.array_equal(y, x) and not np.shares_memory(x, y)
    assert any(st < 0 for st in y.strides) == (layout == "reversed")


def test_the_same_case_gives_the_same_batch_and_other_data_the_same_layout():
    a, b = batch(Case(500, "int32", "uniform", 7)), batch(Case(500, "int32", "uniform", 7))
    assert a.describe() == b.describe() and np.array_equal(a.x, b.x)
    c = batch(Case(500, "int32", "uniform", 7), data_seed=8)
    assert c.describe() == a.describe() and not np.array_equal(c.x, a.x)


@given(st.integers(0, 2**32 - 1), st.sampled_from(LAYOUTS))
def test_a_layout_asked_for_keeps_the_drawn_shape_axis_and_values(seed, layout):
    case = Case(40, "int32", "uniform", seed)
    drawn, asked = batch(case), batch(case, layout=layout)
    assert asked.layout == layout and (asked.x.shape, asked.axis, asked.shape_class) == (
        drawn.x.shape, drawn.axis, drawn.shape_class)
    assert np.array_equal(asked.x, drawn.x)


def test_an_unknown_layout_is_refused_by_name():
    with pytest.raises(ValueError, match=r"layout='diagonal' is unknown; allowed: C, F"):
        batch(Case(40, "int32", "uniform", 0), layout="diagonal")


def test_a_wrong_row_whose_layout_plays_no_part_is_shown_in_c_order(budget):
    """A carry dropped from column 5 on in every row past the second is wrong in every
    layout: its smallest case is shown in C order, whatever layout the search drew; a scan
    that ignores strides keeps the layout it breaks in."""
    def dropped(x):
        out = np.cumsum(x, axis=-1, dtype=x.dtype)
        if x.ndim == 2 and x.shape[0] > 2 and x.shape[1] > 5:
            out[2:, 5:] -= x[2:, 4:5]
        return out

    spec = TargetSpec(dtypes=("int32",), axis=-1, ndim=(2,))
    r = check_property(Target("dropped", dropped, spec), "rows", budget)
    assert r.status == "fail" and r.cause == "LOGIC" and r.smallest_case["layout"] == "C", r
    assert "C layout" in r.diagnosis
    # Its n is the size the shape was drawn at, not its number of elements: the shape is named.
    case = r.smallest_case
    assert diagnose([r]).findings[0].line.endswith(
        f"(smallest case of shape {case['shape']} (drawn at n={case['n']}), index "
        f"{case['index']})")
    target = Target("dropped", dropped, spec)
    case = next(c for seed in range(1000) if (
        b := batch(c := Case(40, "int32", "steps", seed), fixed_axis=-1, ranks=(2,))
    ).layout == "reversed" and b.x.shape[0] > 2 and b.x.shape[1] > 5)
    found = rows_check(target, case)
    assert found.at["layout"] == "reversed" and found.told().at["layout"] == "C"
    r = check_property(Target("c-only", rows.strides_ignored, TargetSpec(axis="arg")),
                       "rows", budget)
    assert r.smallest_case["layout"] != "C" and r.cause == "LOGIC"


@given(st.integers(0, 2**32 - 1), st.sampled_from(DTYPES), st.sampled_from(["add", "max", "min"]),
       st.booleans())
def test_exact_scan_axis_is_exact_scan_of_every_row(seed, dtype, op, inclusive):
    dist = "specials" if dtype.startswith(("float", "bfloat")) and seed % 2 else "uniform"
    b = batch(Case(60, dtype, dist, seed))
    got = np.moveaxis(exact_scan_axis(b.x, op, b.axis, inclusive), b.axis, -1)
    rows = np.moveaxis(b.x, b.axis, -1)
    for r in np.ndindex(rows.shape[:-1]):
        want = exact_scan(rows[r], op, inclusive)
        np.testing.assert_array_equal(got[r].astype(np.float64), want.astype(np.float64))


def test_numpy_conforms_on_batches_and_ignoring_strides_is_caught_with_the_layout(budget):
    numpy = Target("np", lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype),
                   TargetSpec(dtypes=DTYPES, axis="arg"))
    assert check_property(numpy, "rows", budget).status == "pass"
    r = check_property(Target("c-only", rows.strides_ignored, TargetSpec(axis="arg")),
                       "rows", budget)
    assert r.status == "fail" and r.cause == "LOGIC"
    case = r.smallest_case
    assert case["layout"] in ("F", "transposed", "strided", "reversed") and "row" in case
    # 1-D inputs are contiguous: no 1-D property sees it.
    assert check_property(Target("c-only", rows.strides_ignored, TargetSpec(axis="arg")),
                          "integers exact", budget).status == "pass"


def test_a_fixed_axis_target_gets_its_axis_and_1_d_targets_skip_the_property(budget):
    last = Target("last", lambda x: np.cumsum(x, axis=-1, dtype=x.dtype), TargetSpec(axis=-1))
    assert check_property(last, "rows", budget).status == "pass"
    one_d = Target("1-D", lambda x: np.cumsum(x, dtype=x.dtype), TargetSpec())
    assert check_property(one_d, "rows", budget).status == "skip"


def test_batched_precision_loss_is_told_from_a_logic_error(budget):
    """A float16 carry between the rows' tiles of 8 loses precision (right on 'steps' data);
    an off-by-one between them is a logic error."""
    def carried(x, axis, wrong):
        m = np.moveaxis(x, axis, -1).astype(np.float32)
        out = np.cumsum(m, axis=-1)
        if m.shape[-1] > 8:
            head = out[..., 7:8]
            carry = head - m[..., 7:8] if wrong else head.astype(np.float16).astype(np.float32)
            out[..., 8:] = np.cumsum(m[..., 8:], axis=-1) + carry
        return np.moveaxis(out, -1, axis).astype(x.dtype)

    spec = TargetSpec(dtypes=("float32",), axis="arg")
    lossy = check_property(Target("lossy", lambda x, a: carried(x, a, False), spec), "rows", budget)
    broken = check_property(Target("broken", lambda x, a: carried(x, a, True), spec), "rows", budget)
    assert lossy.cause == "PRECISION" and broken.cause == "LOGIC", (lossy, broken)


def test_zero_size_dimensions_give_empty_scans():
    x = generate_data(np.random.default_rng(0), 0, "float32", "uniform").reshape(3, 0, 2)
    assert exact_scan_axis(x, "add", 1).shape == (3, 0, 2)


def _batched(fn, op, **spec):
    return Target(fn.__name__, fn, TargetSpec(op=op, axis="arg", **spec))


def test_products_log_sum_exp_and_indices_are_judged_row_by_row(budget):
    """Correct batched cumprod, logcumsumexp and cummax pass 'rows'; a cumprod that never
    restarts at a row's start and a cummax counting indices from the batch's start fail
    it, and only it: every 1-D input is one row."""
    from scancheck.core.rules import arg_extreme_scan
    from scancheck.engine.conformance import PROPERTIES

    def cummax(x, axis):
        v, i = arg_extreme_scan(np.moveaxis(x, axis, -1), "max")
        return np.moveaxis(v, -1, axis), np.moveaxis(i, -1, axis)

    good = [_batched(lambda x, a: np.cumprod(x, axis=a, dtype=x.dtype), "mul", dtypes=DTYPES),
            _batched(np.logaddexp.accumulate, "logaddexp", dtypes=("float32", "float64")),
            _batched(cummax, "max", dtypes=DTYPES, indices=True)]
    for t in good:
        assert check_property(t, "rows", budget).status == "pass", t.spec
    for fn, op, words in ((rows.cumprod_carried_across_rows, "mul", "mixes rows"),
                          (rows.cummax_flat_indices, "max", "an index other than")):
        t = _batched(fn, op, dtypes=("float32", "float64"), indices=op == "max")
        results = {p: check_property(t, p, budget) for p in PROPERTIES}
        failing = {p for p, r in results.items() if r.status == "fail"}
        assert failing == {"rows"}, (fn.__name__, results)
        r = results["rows"]
        assert r.cause == "LOGIC" and words in r.diagnosis and "row" in r.smallest_case


def test_a_batched_product_beyond_its_bound_alone_too_is_precision_lost(budget):
    """A cumprod rounding every product to 8 significand bits is beyond the bound row by row
    and as a 1-D array alike: precision lost, not the batching."""
    def coarse(x, axis):
        out = np.cumprod(x, axis=axis, dtype=np.float64)
        m, e = np.frexp(out)
        return np.ldexp(np.round(m * 256) / 256, e).astype(x.dtype)

    r = check_property(_batched(coarse, "mul", dtypes=("float32",)), "rows", budget)
    assert r.status == "fail" and r.cause == "PRECISION" and "alone" in r.diagnosis, r


def _refusing_and_wrong(x, axis):
    """Raises on a negative axis; along any other, the last position of every row is left
    as the input (one step of the scan skipped there)."""
    if axis < 0:
        raise IndexError(f"axis {axis} is out of range [0, {x.ndim})")
    out = np.cumsum(x, axis=axis, dtype=x.dtype)
    last = [slice(None)] * x.ndim
    last[axis] = -1
    out[tuple(last)] = x[tuple(last)]
    return out


def test_a_negative_axis_refused_hides_no_wrong_answer_along_the_front_axis():
    """Where a negative axis is refused, the answer along the same axis counted from the
    front is judged in the same case: a wrong one is told, the refusal named beside it; a
    right one leaves the refusal alone as the case's failure."""
    from scancheck.engine.properties.rows import rows_check

    wrong = Target("refusing and wrong", _refusing_and_wrong, TargetSpec(axis="arg"))
    right = Target("refusing", rows.negative_axis_refused, TargetSpec(axis="arg"))
    told = 0
    for seed in range(40):
        case = Case(12, "int32", "integers", seed)
        b = batch(case)
        if b.axis >= 0 or b.x.shape[b.axis] < 2 or b.x.size == 0:
            continue
        failure = rows_check(wrong, case)
        assert failure is not None and failure.cause.name == "LOGIC", failure
        assert "it also refuses a negative axis (raised IndexError" in failure.diagnosis
        refused = rows_check(right, case)
        assert refused.cause.name == "FAULT" and "refuses a negative axis" in refused.diagnosis
        told += 1
    assert told >= 5


def test_after_a_negative_axis_refused_the_search_goes_on_along_the_front_axes(budget):
    """The refusal ends no search: a wrong answer that needs a larger case than the first
    refusal is found along the axes counted from the front, and told with the refusal."""
    wrong = Target("refusing and wrong", _refusing_and_wrong,
                   TargetSpec(axis="arg", dtypes=("int32",)))
    res = check_property(wrong, "rows", budget)
    assert res.status == "fail" and res.cause == "LOGIC", res
    assert res.smallest_case["axis"] >= 0
    assert [m.diagnosis.endswith("it refuses a negative axis") for m in res.more] == [True]


def test_rows_right_along_another_axis_name_it():
    """A scan along axis 0 whatever axis it is given: each case that fails, axis 0 of two
    elements or more, is told the axis its rows are right along; one off by one, and one of the
    flat buffer (right along the one long axis of a small case), get no such words."""
    from scancheck.engine.properties.rows import rows_check

    first = Target("axis 0", rows.first_axis_whatever_the_axis, TargetSpec(axis="arg"))
    off = Target("off by one", lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype) + 1,
                 TargetSpec(axis="arg"))
    flat = Target("flat", lambda x, axis: np.cumsum(x.ravel(), dtype=x.dtype).reshape(x.shape),
                  TargetSpec(axis="arg"))
    told = 0
    for seed in range(40):
        case = Case(12, "int32", "integers", seed)
        failure = rows_check(first, case)
        if failure is not None and batch(case).x.shape[0] > 1:  # else axis 0 scans nothing
            assert failure.cause.name == "LOGIC" and "it scans axis 0 where it is given axis" in \
                failure.diagnosis, failure.diagnosis
            told += 1
        for other in (off, flat):
            wrong = rows_check(other, case)
            assert wrong is None or "it scans axis" not in wrong.diagnosis, wrong.diagnosis
    assert told >= 5


def test_a_scan_of_the_flattened_input_is_told_as_a_contract():
    """A 1-D answer that is the right scan of the input flattened in C order, there and on a
    fresh input, is numpy.cumsum's contract without an axis; a 1-D answer of the same size
    one off, or a flat scan only of small inputs, is a wrong shape and no more."""
    from scancheck.engine.properties.rows import rows_check

    spec = TargetSpec(axis="arg", dtypes=("int32",))
    flat = Target("flat", rows.flattened_whatever_the_axis, spec)
    off = Target("off", lambda x, axis: np.cumsum(x, dtype=x.dtype) + 1, spec)
    small = Target("small", lambda x, axis: np.cumsum(x, dtype=x.dtype) if x.size < 2**x.ndim
                   else np.cumsum(x, axis=axis, dtype=x.dtype)[..., :1].ravel(), spec)
    told = 0
    for seed in range(30):
        case = Case(12, "int32", "integers", seed)
        if batch(case).x.ndim < 2 or batch(case).x.size == 0:
            continue
        failure = rows_check(flat, case)
        assert failure.cause.name == "CONTRACT" and "flattened in C order" in \
            failure.diagnosis, failure.diagnosis
        told += 1
        for other in (off, small):
            wrong = rows_check(other, case)
            assert wrong is None or wrong.cause.name == "LOGIC", wrong.diagnosis
    assert told >= 5


def test_a_fixed_axis_to_declare_is_named_only_where_it_holds_at_every_rank():
    """Declared axis -1, a scan along axis -2 is told to declare -2, and one along axis 0
    (-2 at rank 2, -3 at rank 3) to declare 0, each a contract that conforms so declared;
    one along axis 0 at rank 3 but the last axis at rank 2 keeps no fixed axis: it is told
    the axis it scanned in the case, and no declaration."""
    from scancheck.engine.properties.rows import rows_check

    def along(axis):
        return lambda x: np.cumsum(x, axis=axis, dtype=x.dtype)

    def shifting(x):
        return np.cumsum(x, axis=0 if x.ndim == 3 else -1, dtype=x.dtype)
    spec = {"dtypes": ("int32",), "axis": -1, "ndim": (2, 3)}
    seen = 0
    for seed in range(30):
        case = Case(12, "int32", "integers", seed)
        b = batch(case, fixed_axis=-1, ranks=(2, 3))
        if b.x.shape[-2] < 2 or b.x.shape[0] < 2 or b.x.size == 0:
            continue
        for axis, declared in ((-2, -2), (0, 0)):
            told = rows_check(Target(str(axis), along(axis), TargetSpec(**spec)), case)
            assert told.cause.name == "CONTRACT" and told.detail["contract"] == (
                f"--axis {declared}"), told.diagnosis
        if b.x.ndim == 3:
            told = rows_check(Target("shifting", shifting, TargetSpec(**spec)), case)
            assert told.cause.name == "LOGIC", told.diagnosis
            assert "it scans axis 0 (of 3 axes), not -1" in told.diagnosis
            assert "declare" not in told.diagnosis
        seen += 1
    assert seen >= 5
    for axis in (-2, 0):
        declared = Target(str(axis), along(axis), TargetSpec(**{**spec, "axis": axis}))
        assert all(rows_check(declared, Case(12, "int32", "integers", s)) is None
                   for s in range(10))


def test_a_1d_property_of_a_2d_only_target_tells_the_axis_it_scans():
    """A target of rank 2 alone, declared along its last axis, gets a 1-D case as one row
    of shape (1, n); scanning axis 0 it returns that row unchanged.  The 1-D property tells
    the axis it scans, as rows does, and so declared it conforms."""
    def along_0(x):
        return np.cumsum(x, axis=0, dtype=x.dtype)
    spec = TargetSpec(dtypes=("int32",), axis=-1, ndim=(2,))
    r = check_property(Target("along 0", along_0, spec), "integers exact", Budget(1, max_n=256))
    assert r.status == "fail" and r.cause == "CONTRACT", r
    assert r.detail["contract"] == "--axis -2" and r.smallest_case["n"] == 2
    declared = Target("along 0", along_0, replace(spec, axis=-2))
    assert check_property(declared, "integers exact", Budget(1, max_n=256)).status == "pass"


def test_a_batched_logic_error_is_shown_on_the_plainest_data():
    """A scan along an axis that writes into a copy of its output (an axis that is not the
    last, or an order other than C) returns zeros there: whatever data the search met it on
    (subnormals, where a zero reads as a flush), its case is shown on integers."""
    def lost_writes(x, axis):
        out = np.zeros_like(x)
        n = x.shape[axis]
        dst = np.moveaxis(out, axis, -1).reshape(-1, n)  # a copy unless the axis is last
        np.cumsum(np.moveaxis(x, axis, -1).reshape(-1, n), axis=1, dtype=x.dtype, out=dst)
        return out

    spec = TargetSpec(dtypes=("float32",), axis="arg", allows_empty=False)
    r = check_property(Target("lost", lost_writes, spec), "rows", Budget(seconds=5))
    case = r.smallest_case
    assert r.cause == "LOGIC" and case["data"] == "integers" and r.minimal, r
    assert case["got"] == 0 and case["expected"] != 0, case
