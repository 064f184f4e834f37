"""Monoid law checks find real counterexamples and pass real monoids."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from scancheck.core.operators import get_operator
from scancheck.oracle.laws import check_laws, recurrence_disagreement

small_floats = st.floats(-1e3, 1e3, allow_nan=False, width=32)
pairs = st.tuples(small_floats, small_floats)
#: Examples each law's screen (and each disagreement search) draws: check_laws's own 300 in
#: every profile but ``ci``, the nightly ``thorough`` one among them; a third of that in
#: ``ci`` for the laws whose counterexamples (and those of the mutations tried on check_laws
#: and the operators) are met in the first few dozen draws, none missed in 30 runs of each:
#: Hypothesis's own work on the draws was nine tenths of these tests' time.
EXAMPLES = 100 if settings._current_profile == "ci" else 300


def test_recurrence_pair_is_associative_exactly_with_identity_and_not_commutative():
    op = get_operator("recurrence")
    report = check_laws(op, pairs, identity=(1, 0), exact=True, max_examples=EXAMPLES)
    assert report.associative, report.summary()
    assert report.identity
    assert not report.commutative
    a, b = report.commutativity_counterexample
    assert op.combine_exact(a, b) != op.combine_exact(b, a)


def test_float32_addition_is_not_associative_and_the_defect_is_measured_in_ulps():
    f32 = st.floats(-1e6, 1e6, allow_nan=False, width=32).map(np.float32)
    # check_laws's 300 examples in every profile: 100 drew only triples that reassociate
    # exactly in 5 runs of 40 (none of 30 at 300).
    report = check_laws(lambda a, b: np.float32(a + b), f32, identity=np.float32(0))
    assert not report.associative
    a, b, c = report.associativity_counterexample
    assert (a + b) + c != a + (b + c)
    assert report.max_associativity_defect_ulps is not None
    assert report.max_associativity_defect_ulps >= 1
    assert report.commutative


def test_float_addition_over_the_reals_is_associative():
    assert check_laws(lambda a, b: a + b, small_floats, identity=0, exact=True,
                      max_examples=EXAMPLES).associative


def test_a_wrong_pair_operator_is_caught():
    """(c*a, a*d + b) instead of (c*a, c*b + d) is the mirror image of the recurrence: it
    passes every law, so it must be caught by disagreeing with y_n = a_n*y_{n-1} + b_n."""

    def wrong(x, y):
        return (y[0] * x[0], x[0] * y[1] + x[1])

    report = check_laws(wrong, pairs, identity=(1, 0), exact=True, max_examples=EXAMPLES)
    assert report.associative and report.identity  # the laws cannot see it
    seq = recurrence_disagreement(wrong, pairs, max_examples=EXAMPLES)
    assert seq is not None and len(seq) <= 2
    assert recurrence_disagreement(get_operator("recurrence").combine_exact, pairs,
                                   max_examples=EXAMPLES) is None


def test_max_with_nan_propagation_is_a_monoid_over_floats():
    op = get_operator("max")
    vals = st.floats(allow_nan=True, width=32).map(np.float32)
    combine = lambda a, b: op.combine(np.array(a), np.array(b))[()]  # noqa: E731
    # check_laws's 300 examples in every profile: a max that drops a later NaN breaks
    # associativity only on (x, NaN, y > x), which 100 draws missed.
    report = check_laws(combine, vals, identity=np.float32(-np.inf))
    assert report.associative and report.identity, report.summary()


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="combine"):
        check_laws(3, small_floats)
    with pytest.raises(TypeError, match="elements"):
        check_laws(lambda a, b: a, [1, 2])
    with pytest.raises(ValueError, match="max_examples"):
        check_laws(lambda a, b: a, small_floats, max_examples=0)


def test_multiplication_is_a_commutative_monoid_over_the_reals():
    report = check_laws(get_operator("mul"), small_floats, identity=1, exact=True,
                        max_examples=EXAMPLES)
    assert report.associative and report.identity and report.commutative, report.summary()


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_and_argmin_are_monoids_that_do_not_commute(name):
    """(value, index) with ties to the later index: associative, -1 the identity's index,
    and not commutative (equal values keep the later operand), so a scan may not swap them."""
    op = get_operator(name)
    vals = st.sampled_from([-1.0, 0.0, -0.0, 1.0, float("nan"), float("inf")])
    elements = st.tuples(vals, st.integers(0, 5).map(float))
    report = check_laws(op, elements, identity=tuple(op.identity("float64").tolist()),
                        max_examples=EXAMPLES)
    assert report.associative and report.identity, report.summary()
    assert not report.commutative


def test_logaddexp_is_associative_to_working_precision_with_identity_minus_infinity():
    import mpmath

    op = get_operator("logaddexp")
    vals = st.floats(-50, 50, allow_nan=False, width=32)
    with mpmath.workprec(200):
        lifted = st.builds(mpmath.mpf, vals)
        # exact=True: no ulps of a NumPy type to measure a defect in.
        report = check_laws(lambda a, b: op.combine_exact(a, b), lifted,
                            identity=mpmath.mpf("-inf"), exact=True, max_examples=EXAMPLES)
        assert report.identity and report.commutative
        # Associative over the reals: the two groupings agree to the working precision.
        for a, b, c in ((1, 2, 3), (-40, 7.5, 0.25), (30, -30, 0)):
            a, b, c = (mpmath.mpf(v) for v in (a, b, c))
            left = op.combine_exact(op.combine_exact(a, b), c)
            right = op.combine_exact(a, op.combine_exact(b, c))
            assert abs(left - right) < mpmath.mpf(2) ** -190
