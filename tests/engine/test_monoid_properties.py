"""Targets over tuples of arrays: a user's monoid and scans that take the combine, judged
exactly under the probe monoids, in their declared reverse convention."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scancheck import Monoid
from scancheck.adapters import builtin_targets
from scancheck.controls import CONTROLS
from scancheck.core.monoids import PROBES, namespace
from scancheck.engine.cases import Budget
from scancheck.engine.conformance import check, check_property
from scancheck.engine.diagnosis import Cause
from scancheck.engine.properties import TABLE, applies
from scancheck.kernels.generic_scans import brent_kung, sequential
from scancheck.oracle.monoid_scan import monoid_scan
from scancheck.targets.resolve import resolve
from scancheck.targets.spec import TargetSpec
from scancheck.targets.target import Target

GENERIC = ["sequential (generic)", "brent_kung (generic)", "blelloch (generic)"]
NEW_CONTROLS = [c for c in CONTROLS if c.spec is None and c.locator.split(":")[-1] in (
    "blelloch_down_sweep_swapped", "reverse_in_the_flip_convention", "combines_later_first",
    "identity_on_the_first_leaf_only")]


@pytest.fixture
def budget(budget):
    """The session's budget to n = 2**12: the monoid properties reach the budget's sizes
    (2**20 on a CPU), and most targets here fold in Python."""
    return replace(budget, max_n=2**12)


@pytest.fixture
def float_budget(budget):
    """To n = 2**11, for the float monoids judged around their answers below.  Each case
    folds the target, four association orders and (for a rational combine) the exact
    answer in Python, and the exact answer of a product of n floats has O(n) digits, so
    that fold costs O(n**2): the ladder's two rungs at 4095 and 4096 took half to four
    fifths of each of these tests.  Nothing the property does changes between 2**11 and
    2**12 (a float monoid's scan is always folded in order); where it stops, at
    FLOAT_MAX_N = 2**12, is checked by test_the_scans_of_integer_monoids_follow_the_budget_
    and_float_ones_stop_at_4096, and the fold past SEQUENTIAL_MAX by test_a_combine_
    associative_only_on_small_values_is_the_operators_fault_at_scale."""
    return replace(budget, max_n=2**11)


@pytest.mark.parametrize("name", GENERIC)
def test_no_correct_generic_scan_trips_the_probes(name, budget):
    rep = check(builtin_targets()[name], budget=budget)
    assert rep.passed, rep.rows()
    ran = [r.name for r in rep.results if r.status != "skip"]
    assert ran == ["probe monoids"]


def _reversed(scan, convention):
    def run(elems, combine, axis=0):
        if convention == "flip":
            out = scan(tuple(np.flip(v, axis) for v in elems), combine, axis)
            return tuple(np.flip(v, axis) for v in out)
        # suffix: the forward scan of the flipped input with the operands swapped
        out = scan(tuple(np.flip(v, axis) for v in elems), lambda a, b: combine(b, a), axis)
        return tuple(np.flip(v, axis) for v in out)
    return run


@pytest.mark.parametrize("convention", ["flip", "suffix"])
@pytest.mark.parametrize("axis", [None, 0, -1, "arg"])
def test_a_correct_reverse_scan_in_either_convention_conforms(convention, axis, budget):
    def fn(elems, combine, ax=None):
        return _reversed(brent_kung, convention)(elems, combine,
                                                 ax if axis == "arg" else (axis or 0))
    spec = TargetSpec(combine=True, reverse=convention, axis=axis)
    res = check_property(Target("bk", fn, spec), "probe monoids", budget)
    assert res.status == "pass", res


@pytest.mark.parametrize("declared, done", [("flip", "suffix"), ("suffix", "flip")])
def test_the_wrong_convention_is_named(declared, done, budget):
    fn = _reversed(sequential, done)
    res = check_property(Target("r", fn, TargetSpec(combine=True, reverse=declared)),
                         "probe monoids", budget)
    assert res.status == "fail" and f"follows reverse={done!r}" in res.diagnosis
    assert f"not the declared reverse={declared!r}" in res.diagnosis


@pytest.mark.parametrize("control", NEW_CONTROLS, ids=[c.name for c in NEW_CONTROLS])
def test_the_new_controls_pass_under_every_commutative_operator(control):
    """What only the non-commutative probes catch: under add, max and min each is right."""
    target = resolve(control.locator)
    for name, m in PROBES.items():
        if not m.commutative:
            continue
        x = m.draw(np.random.default_rng(0), (37,))
        got = target.fn(x, m.bound)
        want = monoid_scan(m, x, target.spec.inclusive,
                           None if not target.spec.reverse else target.spec.reverse)
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), name


@pytest.mark.parametrize("control", NEW_CONTROLS, ids=[c.name for c in NEW_CONTROLS])
def test_the_new_controls_are_caught_at_the_smallest_n(control, budget):
    rep, caught = control.check(isolated=False, budget=budget)
    assert caught, rep.verdict.line
    assert rep.verdict.smallest_case["n"] <= 4


def test_the_blelloch_control_names_the_two_partial_results(budget):
    (c,) = [c for c in NEW_CONTROLS if "Blelloch" in c.name]
    rep, _ = c.check(isolated=False, budget=budget)
    assert "the partial results of x[0:2] and x[2:3] were combined later-first" in rep.diagnosis


# A user's monoid: exact integers, rational floats, and a combine with exp (not proven).

def _affine64(a, b):
    return (b[0] * a[0], b[0] * a[1] + b[1])


AFFINE64 = Monoid(_affine64, (np.float64(1), np.float64(0)), name="affine float64")


def _softmax(a, b):
    xp = namespace(a[0])
    m = xp.maximum(a[0], b[0])
    return (m, a[1] * xp.exp(a[0] - m) + b[1] * xp.exp(b[0] - m))


SOFTMAX = Monoid(_softmax, (np.float64(-np.inf), np.float64(0)), name="online softmax",
                 elements=lambda rng, shape: (rng.normal(0, 3, shape), rng.uniform(0, 1, shape)))


def _log_affine(a, b):
    # x -> exp(l)*x + c, the multiplier kept as its log: associative, not commutative.
    xp = namespace(a[0])
    return (a[0] + b[0], xp.exp(b[0]) * a[1] + b[1])


LOG_AFFINE = Monoid(_log_affine, (np.float64(0), np.float64(0)), name="log-affine",
                    elements=lambda rng, shape: (rng.normal(0, 0.3, shape),
                                                 rng.normal(0, 1, shape)))


def _fold_of(m):
    def run(elems):
        return sequential(elems, m.bound)
    return run


def test_a_rational_float_monoid_is_judged_around_its_exact_answer(float_budget):
    """float64 affine maps: a sequential fold rounds at every step, inside the spread of
    association orders around the exact answer; an error of 2**-30 relative is outside."""
    spec = TargetSpec(op=AFFINE64)
    res = check_property(Target("fold", _fold_of(AFFINE64), spec), "monoid scan", float_budget)
    assert res.status == "pass", res
    assert res.detail["oracle"].startswith("exact rationals")

    def off(elems):
        out = sequential(elems, AFFINE64.bound)
        return (out[0], out[1] * (1 + 2.0**-30))
    res = check_property(Target("off", off, spec), "monoid scan", float_budget)
    assert res.status == "fail" and "from the exact answer" in res.diagnosis
    assert "(proven)" in res.diagnosis


def test_a_rational_combine_outside_its_rounding_bound_is_proven_wrong():
    """float32 sums of small integers: a sum off by one whole unit at one output is farther
    from the exact answer than any order's rounding can reach."""
    m = Monoid(lambda a, b: (a[0] + b[0],), (np.float32(0),), name="float32 sum",
               elements=lambda rng, shape: (rng.integers(-8, 9, shape).astype(np.float32),))

    def off_by_one(elems):
        out = sequential(elems, m.bound)[0].copy()
        out[-1] += 1
        return (out,)
    res = check_property(Target("u", off_by_one, TargetSpec(op=m)), "monoid scan",
                         Budget(1.0, max_n=64))
    assert res.status == "fail" and "(proven)" in res.diagnosis, res
    assert res.smallest_case["n"] == 1


#: float32 sums of values from 1e38 to 3e38: from the second output on, every order
#: overflows, as the exact answer's rounding to float32 does.
BIG_SUM = Monoid(lambda a, b: (a[0] + b[0],), (np.float32(0),), name="float32 sum of big values",
                 elements=lambda rng, shape: (rng.uniform(1e38, 3e38, shape).astype(np.float32),))
#: float32 2x2 matrix products, row-major leaves, b after a: products that overflow, then
#: meet a zero (inf * 0, a NaN), where the exact answer is finite.
MAT2 = Monoid(lambda a, b: (b[0] * a[0] + b[1] * a[2], b[0] * a[1] + b[1] * a[3],
                            b[2] * a[0] + b[3] * a[2], b[2] * a[1] + b[3] * a[3]),
              tuple(np.float32(v) for v in (1, 0, 0, 1)), name="2x2 float32 matrices")


@pytest.mark.parametrize("m", [BIG_SUM, MAT2], ids=lambda m: m.name)
def test_a_float_scan_that_overflows_where_some_order_may_is_no_failure(m):
    """An infinity (or a NaN after one) where the magnitudes of the terms reach past
    float32's largest value is what some association order rounds to: no proven error; a
    wrong finite output before that is still one."""
    spec = TargetSpec(op=m)
    res = check_property(Target("fold", _fold_of(m), spec), "monoid scan",
                         Budget(1.0, max_n=512))
    assert res.status == "pass", res

    def off(elems):
        out = tuple(v.copy() for v in sequential(elems, m.bound))
        out[0][0] = out[0][0] * 2 + 1  # the first output: no order reaches it
        return out
    res = check_property(Target("off", off, spec), "monoid scan", Budget(1.0, max_n=512))
    assert res.status == "fail" and "(proven)" in res.diagnosis, res


def test_a_combine_that_divides_is_judged_around_its_exact_answer_not_proven(float_budget):
    m = Monoid(lambda a, b: (a[0] * b[0] / (a[0] * 0 + 1),), (np.float64(1),), name="ratio",
               elements=lambda rng, shape: (rng.uniform(0.5, 2, shape),))

    def off(elems):
        return ((sequential(elems, m.bound)[0] * (1 + 2.0**-20)),)
    res = check_property(Target("off", off, TargetSpec(op=m)), "monoid scan", float_budget)
    assert res.status == "fail" and "not proven: the combine divides" in res.diagnosis
    res = check_property(Target("ok", _fold_of(m), TargetSpec(op=m)), "monoid scan", float_budget)
    assert res.status == "pass" and "spread" in res.detail["oracle"]


@pytest.mark.parametrize("m", [SOFTMAX, LOG_AFFINE], ids=["softmax", "log-affine"])
@pytest.mark.parametrize("reverse", [False, "flip", "suffix"])
def test_a_combine_with_exp_is_judged_not_proven(m, reverse, float_budget):
    def fn(elems):
        if not reverse:
            return sequential(elems, m.bound)
        return _reversed(sequential, reverse)(elems, m.bound)
    target = Target("fold", fn, TargetSpec(op=m, reverse=reverse))
    res = check_property(target, "monoid scan", float_budget)
    assert res.status == "pass", res
    assert res.detail["verdict"].startswith("not proven")


@pytest.mark.parametrize("declared, done", [("flip", "suffix"), ("suffix", "flip")])
def test_the_other_convention_is_outside_the_spread(declared, done, budget):
    def fn(elems):
        return _reversed(sequential, done)(elems, LOG_AFFINE.bound)
    res = check_property(Target("w", fn, TargetSpec(op=LOG_AFFINE, reverse=declared)),
                         "monoid scan", budget)
    assert res.status == "fail" and "not proven" in res.diagnosis
    assert f"follows reverse={done!r}" in res.diagnosis


@pytest.mark.parametrize("m", [LOG_AFFINE, AFFINE64], ids=["log-affine", "affine float64"])
def test_a_float_scan_with_the_operands_swapped_is_told(m, budget):
    def fn(elems):
        return sequential(elems, lambda a, b: m.bound(b, a))
    res = check_property(Target("w", fn, TargetSpec(op=m)), "monoid scan", budget)
    assert res.status == "fail" and "operands swapped" in res.diagnosis


def test_a_wrong_answer_to_a_combine_with_exp_is_caught(budget):
    def wrong(elems):
        out = sequential(elems, SOFTMAX.bound)
        return (out[0], out[1] * 1.001)
    res = check_property(Target("w", wrong, TargetSpec(op=SOFTMAX)), "monoid scan", budget)
    assert res.status == "fail" and "not proven" in res.diagnosis


def test_an_integer_user_monoid_is_checked_by_its_laws_and_its_scan(budget):
    m = PROBES["bicyclic"]
    rep = check(Target("fold", _fold_of(m), TargetSpec(op=m)), budget=budget)
    assert rep.passed, rep.rows()
    assert {r.name for r in rep.results if r.status == "pass"} == {"operator laws",
                                                                   "monoid scan"}


# NumPy before 2.2 warns where Python's max meets an empty array; later ones raise there.
@pytest.mark.filterwarnings("ignore:The truth value of an empty array:DeprecationWarning")
def test_a_float_user_monoid_that_is_no_monoid_or_raises_is_told_as_its_operator(budget):
    """A float average breaks associativity in rationals, and a combine that calls Python's
    max on arrays raises: each is the operator's fault, never the scan's."""
    avg = Monoid(lambda a, b: ((a[0] + b[0]) / 2,), (np.float64(0),), name="average")
    raising = Monoid(lambda a, b: (max(a[0], b[0]),), (np.float64(-1e300),), name="py max")
    for m, words in ((avg, "is no monoid: associativity"), (raising, "raised ValueError")):
        rep = check(Target("fold", _fold_of(m), TargetSpec(op=m)), budget=budget)
        assert rep.verdict.cause == Cause.OPERATOR and words in rep.verdict.line, rep.rows()
    # Where the law broke: the case's n counts the triples drawn, not a scan's elements.
    line = check(Target("fold", _fold_of(avg), TargetSpec(op=avg)), budget=budget).verdict.line
    assert "(first broken at drawn triple 0 of 1)" in line and "smallest case" not in line


def test_only_what_the_combine_raised_is_the_operators():
    from scancheck.engine.properties.monoids import raised_in

    def combine(a, b):
        return (max(a[0], b[0]),)
    with pytest.raises(ValueError) as inside:
        combine((np.zeros(2),), (np.zeros(2),))
    assert raised_in(inside.value, combine)
    with pytest.raises(ValueError) as outside:
        np.add(np.zeros(2), np.zeros(3))
    assert not raised_in(outside.value, combine)


def test_a_float_user_monoid_with_an_infinite_identity_is_checked(float_budget):
    """max's identity -inf is no rational: its laws and scans are judged in floats."""
    summax = Monoid(lambda a, b: (a[0] + b[0], np.maximum(a[1], b[1])),
                    (np.float64(0), np.float64(-np.inf)), name="sum and max", commutative=True)

    def scan(elems):
        return np.cumsum(elems[0]), np.maximum.accumulate(elems[1])

    def short(elems):  # the running max one short from element 5 on
        out = scan(elems)
        out[1][5:] -= 1
        return out
    rep = check(Target("scan", scan, TargetSpec(op=summax)), budget=float_budget)
    assert rep.passed, rep.rows()
    rep = check(Target("short", short, TargetSpec(op=summax)), budget=float_budget)
    assert rep.verdict.cause == Cause.LOGIC, rep.rows()


def test_a_user_monoid_named_like_a_builtin_operator_falls_into_none_of_its_paths(float_budget):
    """Named 'add', over two leaves of float32: judged by its own laws and its exact scan
    only, never by the sum's certificate, bounds or checks past 2**31."""
    def add2(a, b):
        return (a[0] + b[0], a[1] + b[1])
    m = Monoid(add2, (np.int64(0), np.float32(0)), name="add")

    def exact_sum(elems):  # the sum of the float leaf, rounded once per output
        from scancheck.oracle.monoid_scan import exact_monoid_scan

        return exact_monoid_scan(m, elems)
    rep = check(Target("sum", exact_sum, TargetSpec(op=m)), large=True, budget=float_budget)
    assert rep.passed, rep.rows()
    ran = {r.name: r.detail.get("oracle") for r in rep.results if r.status != "skip"}
    assert set(ran) == {"operator laws", "monoid scan"}
    assert all(v.startswith("exact rationals") for v in ran.values())


def test_a_target_of_a_user_monoid_that_returns_the_wrong_form_fails(budget):
    m = PROBES["affine mod 2**32"]
    res = check_property(Target("one", lambda e: e[0], TargetSpec(op=m)), "monoid scan", budget)
    assert res.status == "fail" and "returned leaf 0 of shape" not in res.diagnosis
    assert "a tuple of 2 arrays" in res.diagnosis


def test_a_target_that_writes_into_a_leaf_is_told(budget):
    def writes(elems, combine):
        elems[1][-1] = 0
        return sequential(elems, combine)
    res = check_property(Target("w", writes, TargetSpec(combine=True)), "probe monoids", budget)
    assert res.status == "fail" and res.cause == "INPUT_WRITTEN"
    assert "is 0 after the call" in res.diagnosis


@pytest.mark.parametrize("kwargs, words", [
    ({"combine": True, "op": "max"}, "combine=True with op='max'"),
    ({"combine": True, "reverse": True}, "declare the convention"),
    ({"combine": True, "reverse": "backwards"}, "reverse='backwards'"),
    ({"combine": 1}, "combine=1 must be True or False"),
    ({"combine": True, "initial": True}, "initial=True with a monoid"),
    ({"combine": True, "device": "gpu"}, "checked on the CPU here"),
    ({"op": "nomodule_q:M"}, "cannot be loaded"),
    ({"op": 3}, "op=3 must be"),
    ({"op": "recurrence", "reverse": "flip"}, "non-commutative operator is not defined"),
    ({"combine": True, "dtypes": ("float128",)}, "float128 unknown"),
    # A contract of scans of numbers, accepted over tuples, would be a rule never checked.
    ({"combine": True, "nans": "skip"}, "over tuples the monoid's combine is the whole"),
    ({"combine": True, "overflow": "raise"}, "overflow='raise' with op='add', combine=True"),
    ({"combine": True, "subnormals": "flush"}, "subnormals='flush'"),
    ({"combine": True, "dtypes": ("float64",)}, "would go unread"),
])
def test_a_bad_spec_over_tuples_is_refused(kwargs, words):
    with pytest.raises((ValueError, TypeError), match=words.replace("(", r"\(")):
        TargetSpec(**kwargs)


def test_reverse_true_of_a_commutative_user_monoid_means_either_convention():
    m = Monoid(lambda a, b: (a[0] + b[0],), (np.int64(0),), name="sum", commutative=True)
    assert TargetSpec(op=m, reverse=True).reverse is True


def test_properties_are_routed_by_the_specs_form_not_by_an_operators_name():
    m = Monoid(lambda a, b: (a[0] + b[0],), (np.int64(0),), name="add")  # named like one
    for spec, want in ((TargetSpec(op=m), {"operator laws", "monoid scan"}),
                       (TargetSpec(combine=True), {"probe monoids"}),
                       (TargetSpec(combine=True, op=m), {"operator laws", "probe monoids"}),
                       (TargetSpec(), set())):
        got = {name for name, row in TABLE.items() if applies(row, spec) is None}
        assert got & {"operator laws", "monoid scan", "probe monoids"} == want
        if spec != TargetSpec():
            assert got == want


def test_a_monoid_no_module_holds_cannot_reach_a_child_process():
    """A monoid object is handed to a child by the module:ATTR that holds it; one made where
    no module holds it is refused, naming op and what to do."""
    from scancheck.engine.options import CheckOptions
    from scancheck.isolation.child import Order
    from scancheck.isolation.parent import UsageError, child_command

    m = Monoid(lambda a, b: (a[0] + b[0],), (np.int64(0),), name="sum")
    with pytest.raises(UsageError, match=r"op=Monoid\('sum'.*cannot be rebuilt.*module level"):
        child_command(Order("x:y", CheckOptions(spec=TargetSpec(op=m))))
    from scancheck.controls.tuples import ONLINE_SOFTMAX_FORGETTING_A_RESCALE as held

    cmd = child_command(Order("x:y", CheckOptions(spec=TargetSpec(op=held))))
    assert '"op": "scancheck.controls.tuples:ONLINE_SOFTMAX_FORGETTING_A_RESCALE"' in cmd[-1]


def test_the_scans_of_integer_monoids_follow_the_budget_and_float_ones_stop_at_4096():
    """'probe monoids' and 'monoid scan' search to the budget's largest n (no cap of 4096 of
    their own); a monoid with float leaves, whose oracle is exact rationals, to 4096."""
    budget = Budget(0.2, max_n=2**14)
    res = check_property(builtin_targets()["brent_kung (generic)"], "probe monoids", budget)
    assert res.status == "pass" and res.detail["largest n"] == 2**14, res.detail
    res = check_property(Target("fold", _fold_of(PROBES["affine mod 2**32"]),
                                TargetSpec(op=PROBES["affine mod 2**32"])), "monoid scan", budget)
    assert res.status == "pass" and res.detail["largest n"] == 2**14, res.detail
    res = check_property(Target("fold", _fold_of(SOFTMAX), TargetSpec(op=SOFTMAX)),
                         "monoid scan", budget)
    assert res.status == "pass" and res.detail["largest n"] == 2**12, res.detail


def test_a_combine_associative_only_on_small_values_is_the_operators_fault_at_scale():
    """Past 4096 elements the exact answer is taken in log-depth order; where the sequential
    fold differs from it, the combine is not associative on those elements (its laws held on
    the small values drawn): the operator's fault, not the fold's."""
    def add_until_5000(a, b):
        s = a[0] + b[0]
        return (np.where(s > 5000, s ^ 1, s),)

    m = Monoid(add_until_5000, (np.int64(0),), name="add, then xor 1 past 5000",
               elements=lambda rng, shape: (rng.integers(1, 4, shape, dtype=np.int64),))
    res = check_property(Target("fold", _fold_of(m), TargetSpec(op=m)), "monoid scan",
                         Budget(1, max_n=2**13))
    assert res.status == "fail" and res.cause == "OPERATOR", res
    assert "not associative on these elements" in res.diagnosis


JAX_TARGETS = ["jax.lax.associative_scan (generic)",
               "jax.lax.associative_scan (generic, reverse)"]


def _jax_refuses_a_negative_axis_reversed() -> bool:
    """Whether this JAX raises on a reverse scan along an axis named by a negative number
    (docs/findings.md: JAX 0.10.2 does)."""
    import jax
    import jax.numpy as jnp

    try:
        jax.lax.associative_scan(jnp.add, jnp.zeros((2, 3)), axis=-1, reverse=True)
    except TypeError:
        return True
    return False


@pytest.mark.slow
@pytest.mark.parametrize("name", JAX_TARGETS)
def test_jax_associative_scan_is_judged_as_jax_behaves_under_the_probes(name):
    """The probes' N-D cases name the axis by a negative number half the time, from seeds
    the search draws past the ladder (a budget of 5 s meets them): forward, JAX conforms;
    reversed, it conforms where it takes a negative axis and is a fault raised by the
    target, naming it, where it refuses one."""
    pytest.importorskip("jax", reason="jax is not installed")
    rep = check(builtin_targets()[name], budget=Budget(5))
    (res,) = [r for r in rep.results if r.status != "skip"]
    if "reverse" in name and _jax_refuses_a_negative_axis_reversed():
        assert res.status == "fault" and "rev dimensions" in res.diagnosis, rep.rows()
        assert "took the same axis counted from the front" in res.diagnosis, rep.rows()
        assert res.smallest_case["n"] == 1
    else:
        assert rep.passed, rep.rows()
        assert res.detail["largest n"] == 2**7


@pytest.mark.slow
def test_jax_reverse_follows_the_flip_convention_not_the_suffix_one():
    pytest.importorskip("jax", reason="jax is not installed")
    from dataclasses import replace

    t = builtin_targets()["jax.lax.associative_scan (generic, reverse)"]
    t = replace(t, spec=replace(t.spec, reverse="suffix", axis=None))
    res = check_property(t, "probe monoids", Budget(0.5, max_n=8))
    assert res.status == "fail" and "follows reverse='flip'" in res.diagnosis


MODELS = [n for n in builtin_targets() if n.startswith("model:") and n.endswith("(generic)")]


@pytest.mark.parametrize("name", MODELS)
def test_every_kernels_schedule_conforms_under_the_probes(name, budget):
    """Each kernel's model, its combine network run over tuples: the schedule the kernel
    performs is right for every monoid the probes stand for, not only for add."""
    res = check_property(builtin_targets()[name], "probe monoids", budget)
    assert res.status == "pass", res


def test_a_schedule_with_one_combine_swapped_is_caught():
    from dataclasses import replace as dc_replace

    from scancheck.kernels.generic_scans import network_scan
    from scancheck.kernels.registry import get_variant

    var = get_variant("blelloch")

    def swapped(elems, combine):
        net = var.build_model(elems[0].shape[0], 64)
        last = max(i for i, st in enumerate(net.steps) if st.combine)
        net.steps[last] = dc_replace(net.steps[last], a=net.steps[last].b, b=net.steps[last].a)
        return network_scan(net, elems, combine)

    res = check_property(Target("bl", swapped, TargetSpec(combine=True, inclusive=False,
                                                          max_n=128)),
                         "probe monoids", Budget(1.0))
    assert res.status == "fail" and "operand order" in res.diagnosis


@given(st.integers(2, 64), st.integers(0, 2**32 - 1), st.sampled_from(["skip", "duplicate",
                                                                       "swap", "split"]),
       st.data())
@settings(max_examples=60, deadline=None)
def test_every_order_bug_shows_on_one_case_of_the_affine_probe(n, seed, bug, data):
    """An element skipped, counted twice, two elements swapped, or the prefix's two halves
    combined later-first: one case of the affine maps mod 2**32 shows it."""
    from scancheck.engine.properties.monoid_judgement import judge

    m = PROBES["affine mod 2**32"]
    x = m.draw(np.random.default_rng(seed), (n,))
    j = data.draw(st.integers(0, n - 2))
    if bug == "skip":
        idx = [i for i in range(n) if i != j] + [j]
        y = tuple(np.concatenate([v[idx[:-1]], m.identity_like((1,))[k]])
                  for k, v in enumerate(x))
    elif bug == "duplicate":
        y = tuple(np.array(v) for v in x)
        both = m.apply(tuple(v[j:j + 1] for v in x), tuple(v[j:j + 1] for v in x))
        for v, b in zip(y, both):
            v[j] = b[0]
    elif bug == "swap":
        idx = [*range(j), j + 1, j, *range(j + 2, n)]
        y = tuple(v[idx] for v in x)
    if bug == "split":
        got = sequential(x, m.bound)
        head = tuple(v[j:j + 1] for v in got)
        tail = tuple(v[-1:] for v in sequential(tuple(v[j + 1:] for v in x), m.bound))
        last = m.apply(tail, head)  # x[j+1:] before x[:j+1]
        for v, w in zip(got, last):
            v[-1] = w[0]
    else:
        got = sequential(y, m.bound)
    # Judged on the outputs above: the target's function is never called.
    target = Target("bug", lambda *a: pytest.fail("called"), TargetSpec(combine=True))
    failure = judge(target, m, x, got, 0)
    assert failure is not None
    if bug == "split":
        assert "operand order" in failure.diagnosis, failure.diagnosis


def _swapped_from_rank_3(elems, combine, axis):
    """A sequential scan along ``axis`` that combines later-first on arrays of rank 3 and up."""
    x = tuple(np.moveaxis(np.array(v), axis, 0) for v in elems)
    for k in range(1, x[0].shape[0]):
        a, b = tuple(v[k - 1:k] for v in x), tuple(v[k:k + 1] for v in x)
        for v, w in zip(x, combine(b, a) if x[0].ndim >= 3 else combine(a, b)):
            v[k:k + 1] = w
    return tuple(np.moveaxis(v, 0, axis) for v in x)


def test_a_generic_scan_along_an_axis_is_driven_at_ranks_past_2_and_negative_axes(budget):
    """Once only 2-D arrays (axis 0 or 1) were drawn: a scan wrong from rank 3 conformed."""
    seen = set()

    def watching(elems, combine, axis):
        seen.add((elems[0].ndim, axis < 0))
        return _swapped_from_rank_3(elems, combine, axis)

    r = check_property(Target("rank 3", watching, TargetSpec(combine=True, axis="arg")),
                       "probe monoids", budget)
    assert r.status == "fail" and "output" in r.diagnosis, r
    assert max(rank for rank, _ in seen) >= 3


def test_a_monoid_on_its_domain_is_judged_on_that_domain_alone(budget):
    """The bicyclic combine with its non-negative pairs as a Hypothesis strategy: 'operator
    laws' passes, and 'monoid scan' hands the target only elements of the domain (this one
    refuses any other); without the strategy its laws fail, the operator's fault."""
    from hypothesis import strategies as st

    b = PROBES["bicyclic"]
    m = Monoid(b.combine, b.identity, name="bicyclic",
               elements=st.tuples(st.integers(0, 9), st.integers(0, 9)))
    fold = _fold_of(m)

    def on_domain_only(elems):
        assert all((v >= 0).all() for v in elems), "an element outside the domain"
        return fold(elems)
    rep = check(Target("fold", on_domain_only, TargetSpec(op=m)), budget=budget)
    assert rep.passed, rep.rows()
    assert {r.name for r in rep.results if r.status == "pass"} == {"operator laws", "monoid scan"}
    anywhere = Monoid(b.combine, b.identity, name="bicyclic anywhere")
    res = check_property(Target("fold", _fold_of(anywhere), TargetSpec(op=anywhere)),
                         "operator laws", budget)
    assert res.status == "fail" and res.cause == "OPERATOR", res


def test_what_the_target_did_is_told_only_where_a_longer_case_fits_it_too():
    """Two outputs fit "it scans in reverse" by chance as often as not: the story is told
    where the target's run on a longer case fits it too, and not where that run is right."""
    from scancheck.engine.properties.monoid_judgement import judge

    m = PROBES["affine mod 2**32"]
    t = Target("t", sequential, TargetSpec(combine=True))
    x = m.draw(np.random.default_rng(0), (2,))
    got = monoid_scan(m, x, True, "flip")  # output 1 is wrong, output 0 fits both stories
    assert "in reverse" in judge(t, m, x, got, 0).diagnosis
    more = m.draw(np.random.default_rng(1), (40,))
    fits = judge(t, m, x, got, 0, lambda: (more, monoid_scan(m, more, True, "flip")))
    assert "in reverse" in fits.diagnosis
    right = judge(t, m, x, got, 0, lambda: (more, monoid_scan(m, more)))
    assert right.cause == Cause.LOGIC and "in reverse" not in right.diagnosis


def _short_on_an_empty_batch(wrong_from: int | None = None):
    """A generic N-D scan that drops the last output along the axis of an empty batch (as
    torch's eager associative_scan did), and swaps its operands from ``wrong_from`` on."""
    def scan(elems, combine, axis):
        if 0 in elems[0].shape:
            return tuple(np.delete(v, -1, axis) if v.shape[axis] else v for v in elems)
        if wrong_from is not None and elems[0].shape[axis] >= wrong_from:
            return sequential(elems, lambda a, b: combine(b, a), axis)
        return sequential(elems, combine, axis)
    return Target("short", scan, TargetSpec(combine=True, axis="arg"))


def test_an_empty_batch_is_drawn_and_a_wrong_answer_to_it_is_named(budget):
    r = check_property(_short_on_an_empty_batch(), "probe monoids", budget)
    assert r.status == "fail" and r.cause == "LOGIC", r
    assert r.detail["empty batch"] == r.smallest_case["shape"] and 0 in r.smallest_case["shape"]
    assert r.reason == "EMPTY_BATCH"
    assert "(an empty batch: its scan is an empty batch of the same shape)" in r.diagnosis
    # What differs, the shape, is named, and no dtype as if it were wrong.
    assert "returned leaf 0 of shape (" in r.diagnosis and "dtype" not in r.diagnosis, r
    # The search went on past it, with batches that hold elements, and found nothing more.
    assert r.detail["searched"].startswith("n = 0 to") and "wrong on an empty batch" in (
        r.detail["searched"])


def test_a_wrong_answer_to_an_empty_batch_hides_no_other(budget):
    """Wrong on an empty batch and, from n = 3000, on every batch: the ladder meets the empty
    batch first (its seed's rung is n = 2049), and both are told."""
    rep = check(_short_on_an_empty_batch(wrong_from=3000), ("probe monoids",), budget=budget)
    (r,) = rep.results
    assert r.status == "fail" and r.smallest_case["n"] >= 3000 and "empty batch" not in r.detail
    (empty,) = r.more
    assert "empty batch" in empty.detail
    assert len(rep.verdict.findings) == 2, [f.line for f in rep.verdict.findings]


def test_a_short_ladder_names_a_negative_axis():
    """A generic scan taking an axis up to n = 128 (JAX's reverse scan) meets a negative axis
    on its ladder alone: once only seeds past 12 named one, and such a refusal was found in
    one check and missed in the next."""
    from scancheck.controls.tuples import reverse_refusing_a_negative_axis as refusing

    target = Target("refusing", refusing, replace(refusing.scan_spec, max_n=128))
    r = check_property(target, "probe monoids", Budget(0.001))
    assert r.status == "fault" and "refuses a negative axis" in r.diagnosis, r


def test_a_failure_the_same_case_shows_with_a_full_batch_is_not_the_empty_batchs():
    """A size limit past 2048 met first on an empty batch (the ladder's rung at n = 2049 is
    one) is the size limit's failure, as the same case with its batch holding elements
    shows, not an empty batch's; a refusal of a negative axis likewise."""
    def one_block(elems, combine, axis):
        if elems[0].shape[axis] > 2048:
            raise ValueError("too many elements for one block")
        return sequential(elems, combine, axis)

    rep = check(Target("one block", one_block, TargetSpec(combine=True, axis="arg")),
                ("probe monoids",), budget=Budget(0.02, max_n=2**12))
    assert [f.cause.name for f in rep.verdict.findings] == ["FAULT"], rep.verdict.line
    assert not any("empty batch" in r.detail for r in (*rep.results[0].more, rep.results[0]))
    from scancheck.controls.tuples import reverse_refusing_a_negative_axis as refusing
    from scancheck.engine.cases import Case
    from scancheck.engine.diagnosis import Reason
    from scancheck.engine.properties.monoids import probes_check

    failure = probes_check(Target("refusing", refusing, refusing.scan_spec),
                           Case(3, "int64", "bicyclic", 23))
    assert "refused axis" in failure.detail and "empty batch" not in failure.detail
    assert failure.reason == Reason.REFUSED_AXIS


def _wrong_under_min_at_9(elems, combine):
    """Right but where n = 9 under a min combine: the suffix of the last three outputs lost."""
    out = brent_kung(elems, combine)
    if elems[0].shape[0] == 9 and "min" in getattr(getattr(combine, "monoid", None), "name", ""):
        out = tuple(np.concatenate([v[:-3], v[-3:][::-1]]) for v in out)
    return out


def test_a_bug_the_ladder_misses_is_met_on_the_case_it_was_seen_on():
    """The ladder gives the min probe n = 1 and 63: a bug of min at n = 9 passes a short
    budget, and fails on its witness whatever the budget."""
    from scancheck.targets.target import Witness

    target = Target("min9", _wrong_under_min_at_9, TargetSpec(combine=True))
    short = Budget(1e-3, max_n=2**10)
    assert check_property(target, "probe monoids", short).status == "pass"
    seen = replace(target, witnesses=(Witness("probe monoids", 9, "int64", "min (uint32)", 0),))
    res = check_property(seen, "probe monoids", short)
    assert res.status == "fail" and res.cause == Cause.LOGIC.name
    assert res.smallest_case["n"] == 9 and res.smallest_case["data"] == "min (uint32)"
    # A witness of another property, or of data this property does not draw, is not run.
    for other in (Witness("rows", 9, "int64", "min (uint32)", 0),
                  Witness("probe monoids", 9, "int64", "uniform", 0)):
        assert check_property(replace(target, witnesses=(other,)), "probe monoids",
                              short).status == "pass"


def test_a_monoids_smallest_case_is_told_without_the_label_dtype(budget):
    """A monoid's case carries dtype int64 as a label only (its leaves have their own): the
    line that tells the smallest case leaves it out; any other case keeps its dtype."""
    from scancheck.engine.report import case_text

    rep = check(resolve("scancheck.controls.tuples:combines_later_first"),
                properties=("probe monoids",), budget=budget)
    case = rep.verdict.smallest_case
    assert case["data"] in PROBES and case["dtype"] == "int64"  # kept in the JSON
    assert "dtype=" not in case_text(case) and f"data={case['data']}" in case_text(case)
    assert case_text({"n": 3, "dtype": "float32", "data": "integers"}).startswith(
        "n=3, dtype=float32, data=integers")


def test_a_wrong_output_of_uint64_leaves_is_shown_in_whole_integers(budget):
    """An affine map over uint64 scanned wrong: the case's got and expected are the leaves'
    integers, those past int64 too (one array of both would hold them only as floats)."""
    affine = Monoid(lambda a, b: (b[0] * a[0], b[0] * a[1] + b[1]),
                    (np.uint64(1), np.uint64(0)), name="affine u64")

    def wrong(elems):
        a, b = (np.array(v) for v in elems)
        with np.errstate(over="ignore"):
            a[1:] = a[1:] * a[:-1]  # each map composed with its predecessor only
        return a, b

    rep = check(Target("wrong", wrong, TargetSpec(op=affine)), budget=budget)
    case = rep.verdict.smallest_case
    assert case is not None and rep.verdict.cause == Cause.LOGIC, rep.verdict.line
    for side in ("got", "expected"):
        assert all(isinstance(v, int) for v in case[side]), case
