"""The exact scan of a monoid in every convention, its laws, and what a wrong scan did."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.core.monoids import PROBES, Monoid, namespace
from scancheck.oracle.exact import round_fraction
from scancheck.oracle.monoid_scan import (
    broken_law,
    exact_monoid_scan,
    float_spread,
    monoid_scan,
    rational,
    wrong_order_split,
)

AFFINE = PROBES["affine mod 2**32"]


def _fold(m, xs):
    """The combine of the elements ``xs`` (a list of one-element tuples), left to right."""
    acc = m.identity_like((1,))
    for x in xs:
        acc = m.apply(acc, x)
    return tuple(int(v[0]) for v in acc)


@given(st.integers(1, 12), st.integers(0, 2**32 - 1), st.sampled_from(list(PROBES)))
def test_each_convention_is_its_definition(n, seed, name):
    m = PROBES[name]
    x = m.draw(np.random.default_rng(seed), (n,))
    el = [tuple(v[k:k + 1] for v in x) for k in range(n)]
    for inclusive in (True, False):
        fwd = monoid_scan(m, x, inclusive)
        flip = monoid_scan(m, x, inclusive, "flip")
        suffix = monoid_scan(m, x, inclusive, "suffix")
        for k in range(n):
            upto = el[:k + 1] if inclusive else el[:k]
            after = el[k:] if inclusive else el[k + 1:]
            assert tuple(int(v[k]) for v in fwd) == _fold(m, upto)
            assert tuple(int(v[k]) for v in suffix) == _fold(m, after)  # in index order
            assert tuple(int(v[k]) for v in flip) == _fold(m, after[::-1])
        # flip is the scan of the flipped input, flipped back.
        back = monoid_scan(m, tuple(v[::-1] for v in x), inclusive)
        assert all(np.array_equal(a, b[::-1]) for a, b in zip(flip, back))


def test_scans_along_an_axis_are_the_rows_scans():
    x = AFFINE.draw(np.random.default_rng(3), (4, 9))
    got = monoid_scan(AFFINE, x, True, "flip", axis=1)
    for r in range(4):
        row = monoid_scan(AFFINE, tuple(v[r] for v in x), True, "flip")
        assert all(np.array_equal(g[r], w) for g, w in zip(got, row))


def _matmul2(a, b):
    # 2x2 matrices [[p, q], [r, s]], the earlier times the later.
    p, q, r, s = a
    P, Q, R, S = b
    return (p * P + q * R, p * Q + q * S, r * P + s * R, r * Q + s * S)


MATRICES = Monoid(_matmul2, tuple(np.float32(v) for v in (1, 0, 0, 1)), name="2x2 float32")


def test_a_rational_float_combine_is_rounded_once_per_output():
    assert rational(MATRICES)
    x = MATRICES.draw(np.random.default_rng(5), (7,))
    got = exact_monoid_scan(MATRICES, x)
    acc = [Fraction(1), Fraction(0), Fraction(0), Fraction(1)]
    for k in range(7):
        acc = list(_matmul2(acc, [Fraction(float(v[k])) for v in x]))
        assert [float(v[k]) for v in got] == [round_fraction(q, "float32") for q in acc]


def _softmax(a, b):
    xp = namespace(a[0])
    m = xp.maximum(a[0], b[0])
    return (m, a[1] * xp.exp(a[0] - m) + b[1] * xp.exp(b[0] - m))


SOFTMAX = Monoid(_softmax, (np.float64(-np.inf), np.float64(0)), name="online softmax",
                 elements=lambda rng, shape: (rng.normal(0, 3, shape), rng.uniform(0, 1, shape)))


def test_a_combine_with_exp_has_no_exact_answer_only_a_spread():
    assert not rational(SOFTMAX)
    x = SOFTMAX.draw(np.random.default_rng(0), (40,))
    assert exact_monoid_scan(SOFTMAX, x) is None
    sp = float_spread(SOFTMAX, x)
    assert sp.orders == 4
    # The running max is exact in every order; the sums differ by roundings only.
    assert np.all(sp.spread[0] == 0)
    assert np.all(sp.spread[1] <= 1e-12 * np.abs(sp.reference[1]) + 1e-300)


def test_a_law_that_fails_is_found_with_its_operands():
    diff = Monoid(lambda a, b: (a[0] - b[0],), (np.int64(0),), name="difference")
    broken = broken_law(diff, 64, 0)
    assert broken is not None and broken.law.startswith("associativity")
    a, b, c = (broken.operands[k][0] for k in "abc")
    assert (a - b) - c != a - (b - c)
    assert "is no monoid" in broken.line("difference")


def test_a_rational_float_law_that_fails_is_shown_in_numbers():
    """A float average (no monoid) breaks associativity exactly, in rationals; the operands
    and sides shown are numbers, not Fractions."""
    avg = Monoid(lambda a, b: ((a[0] + b[0]) / 2,), (np.float64(0),), name="average")
    assert rational(avg)
    broken = broken_law(avg, 64, 0)
    assert broken is not None and "is no monoid" in broken.line("average")
    assert all(isinstance(v, float) for side in broken.sides for v in side)
    a, b, c = (Fraction(broken.operands[k][0]) for k in "abc")
    assert ((a + b) / 2 + c) / 2 != (a + (b + c) / 2) / 2


#: Monoids that break associativity on drawn leaves of their dtypes: one leaf, two, a float.
_NOT_ASSOCIATIVE = (
    Monoid(lambda a, b: (a[0] - b[0],), (np.int64(0),), name="difference"),
    Monoid(lambda a, b: (a[0] + b[0], a[1] * b[1] + a[0]), (np.int32(0), np.int32(1)),
           name="sum and a skewed product"),
    Monoid(lambda a, b: ((a[0] + b[0]) / 2,), (np.float64(0),), name="average"),
)


def _associates(m, ops):
    a, b, c = (tuple(np.array([v], e.dtype) for v, e in zip(ops[k], m.identity)) for k in "abc")
    return all(np.array_equal(u, v) for u, v in zip(m.apply(m.apply(a, b), c),
                                                    m.apply(a, m.apply(b, c))))


@pytest.mark.parametrize("m", _NOT_ASSOCIATIVE, ids=lambda m: m.name)
@pytest.mark.parametrize("seed", range(4))
def test_a_broken_law_is_shown_on_the_simplest_operands_that_break_it(m, seed):
    """The operands shown break the law, are small integers or halves (drawn leaves are any
    int64, or floats of a normal distribution), and none but a zero leaf can be made zero
    with the law still broken: the simplest value was tried first."""
    broken = broken_law(m, 256, seed)
    assert broken is not None and broken.law.startswith("associativity")
    ops = broken.operands
    assert not _associates(m, ops)
    leaves = [v for k in "abc" for v in ops[k]]
    assert all(float(2 * v).is_integer() and abs(v) <= 8 for v in leaves), ops
    for k in "abc":
        for j, v in enumerate(ops[k]):
            if v != 0:
                zeroed = {**ops, k: ops[k][:j] + (0,) + ops[k][j + 1:]}
                assert _associates(m, zeroed), (k, j, ops)


@pytest.mark.parametrize("kind", ["strategy", "function"])
def test_a_broken_law_of_a_monoid_with_a_domain_is_shrunk_within_it(kind):
    """Elements of its own (at least 10 here, where 0 would be simpler): the operands shown
    are some of them, and no simpler ones of them break the law the same way."""
    def combine(a, b):
        return (a[0] * 2 + b[0],)

    def drawn(rng, shape):
        return (rng.integers(10, 10**6, shape),)

    elements = st.tuples(st.integers(10, 10**6)) if kind == "strategy" else drawn
    m = Monoid(combine, (np.int64(0),), name="skewed", elements=elements, commutative=True)
    broken = broken_law(m, 64, 0)
    assert broken is not None
    assert all(v >= 10 for k in broken.operands for v in broken.operands[k]), broken.operands
    first = broken_law(m, 64, 0)
    assert first.operands == broken.operands  # the same line on every call (a report's script)


def test_a_combine_that_is_not_elementwise_is_shown_as_drawn_with_sides_that_differ():
    """Where one element alone does not break the law the batch broke (np.max over the
    operands' arrays, not their elements), the line shows the drawn operands and the sides
    the batch gave them, which differ: no shrunk operands on which the law holds."""
    m = Monoid(lambda a, b: (np.max([a[0], b[0]]),), (np.int64(np.iinfo(np.int64).min),),
               name="np.max of the arrays", commutative=True)
    broken = broken_law(m, 256, 0)
    assert broken is not None and broken.sides[0] != broken.sides[1], broken


def test_a_law_broken_by_rounding_in_size_says_so_and_an_exact_one_does_not():
    """The sum of cubes, cbrt(a**3 + b**3), is associative over the reals; in floats its
    rounding grows where the cubes cancel, past the 64 units of roundoff a law's sides may
    differ by: the line says by how many and how the domain may leave such operands out.
    An integer law broken exactly says nothing of rounding."""
    cubes = Monoid(lambda a, b: (np.cbrt(a[0] ** 3 + b[0] ** 3),), (np.float64(0),),
                   name="sum of cubes", commutative=True)
    broken = broken_law(cubes, 4096, 0)
    assert broken is not None and 64 < broken.roundoffs < 2**20, broken
    assert "units of roundoff" in broken.line("sum of cubes") and "elements=" in (
        broken.line("sum of cubes"))
    diff = Monoid(lambda a, b: (a[0] - b[0],), (np.int64(0),), name="difference")
    assert broken_law(diff, 64, 0).roundoffs is None


def test_opposite_infinities_are_two_sides_that_differ():
    """A combine that answers +inf or -inf by a comparison: (a.b).c is +inf where a.(b.c)
    is -inf.  The roundoff a law's sides may differ by is a multiple of their magnitude,
    infinite here, and no rounding takes +inf to -inf."""
    def sign_of_order(a, b):
        return (np.where(a[0] > b[0], np.inf, -np.inf),)

    m = Monoid(sign_of_order, (np.float64(0),), name="sign of order")
    broken = broken_law(m, 64, 0)
    assert broken is not None and broken.law.startswith("associativity"), broken
    assert sorted(broken.sides) == [(-np.inf,), (np.inf,)]


def test_an_infinite_identity_is_judged_in_floats():
    """max's identity -inf is no rational: the laws hold within roundoff, and the exact
    answer of a scan is not claimed."""
    summax = Monoid(lambda a, b: (a[0] + b[0], np.maximum(a[1], b[1])),
                    (np.float64(0), np.float64(-np.inf)), name="sum and max", commutative=True)
    assert not rational(summax)
    assert broken_law(summax, 64, 0) is None
    x = summax.draw(np.random.default_rng(0), (9,))
    assert exact_monoid_scan(summax, x) is None


def test_a_wrong_identity_is_a_broken_law():
    bad = Monoid(lambda a, b: (a[0] * b[0],), (np.int64(0),), name="mul with identity 0")
    assert "identity" in broken_law(bad, 64, 0).law


def test_a_commutativity_declared_and_false_is_a_broken_law():
    m = Monoid(AFFINE.combine, AFFINE.identity, name="affine", commutative=True,
               elements=AFFINE._elements)
    assert "commutativity" in broken_law(m, 64, 0).law


def test_the_two_partial_results_combined_later_first_are_found():
    x = AFFINE.draw(np.random.default_rng(1), (9,))
    head = tuple(v[:3] for v in x)
    tail = tuple(v[3:7] for v in x)
    swapped = AFFINE.apply(tuple(v[-1:] for v in monoid_scan(AFFINE, tail)),
                           tuple(v[-1:] for v in monoid_scan(AFFINE, head)))
    assert wrong_order_split(AFFINE, x, 6, tuple(int(v[0]) for v in swapped)) == 3
    right = tuple(int(v[6]) for v in monoid_scan(AFFINE, x))
    assert wrong_order_split(AFFINE, x, 6, right) is None


def test_an_unknown_convention_is_refused():
    with pytest.raises(ValueError, match="reverse='backwards'"):
        monoid_scan(AFFINE, AFFINE.draw(np.random.default_rng(0), (3,)), reverse="backwards")


def _affine32(a, b):
    return (b[0] * a[0], b[0] * a[1] + b[1])


AFFINE32 = Monoid(_affine32, (np.float32(1), np.float32(0)), name="affine float32",
                  elements=lambda rng, shape: (rng.uniform(-1.5, 1.5, shape).astype(np.float32),
                                               rng.normal(0, 1, shape).astype(np.float32)))


@given(st.integers(1, 200), st.integers(0, 2**32 - 1), st.sampled_from([1, 3, 4, 16, 32]))
def test_no_association_order_leaves_the_rounding_bound(n, seed, span):
    """Sequential, Kogge-Stone and tiled orders in float32, against the exact answer: every
    output within the bound (the bound is what makes a failure proven)."""
    from scancheck.oracle.monoid_scan import _tree_scan, exact_reference, rounding_bound

    x = AFFINE32.draw(np.random.default_rng(seed), (n,))
    exact = exact_reference(AFFINE32, x)
    bound = rounding_bound(AFFINE32, x)
    for got in (monoid_scan(AFFINE32, x), _tree_scan(AFFINE32, x, span)):
        for g, e, b in zip(got, exact, bound):
            assert np.all(np.abs(g.astype(np.float64) - e) <= b)


AFFINE64 = Monoid(_affine32, (np.float64(1), np.float64(0)), name="affine float64")


@given(st.integers(1, 60), st.integers(0, 2**32 - 1), st.booleans(),
       st.sampled_from([None, "flip", "suffix"]), st.sampled_from([AFFINE32, AFFINE64, SOFTMAX]))
def test_without_an_exact_answer_the_spread_is_taken_around_the_float64_fold(
        n, seed, inclusive, reverse, m):
    """The reference is the sequential fold in float64 in the scan's convention: for float64
    leaves the fold of the leaves' own dtype, taken once, for float32 a fold of its own."""
    from scancheck.oracle.monoid_scan import _wide

    x = m.draw(np.random.default_rng(seed), (n,))
    want = monoid_scan(_wide(m), tuple(v.astype(np.float64) for v in x), inclusive, reverse)
    got = float_spread(m, x, inclusive, reverse).reference
    assert all(g.dtype == np.float64 and np.array_equal(g, w) for g, w in zip(got, want))


@given(st.integers(1, 90), st.integers(0, 2**32 - 1), st.sampled_from([1, 3, 4, 32]),
       st.sampled_from(list(PROBES)), st.sampled_from([(), (2,)]))
def test_every_association_order_of_an_exact_monoid_is_its_sequential_fold(
        n, seed, span, name, batch):
    """Each tile folded from the identity into its own outputs, and carried: the tiled
    orders give the fold's answer bit for bit where the combine is associative."""
    from scancheck.oracle.monoid_scan import _tree_scan

    m = PROBES[name]
    x = m.draw(np.random.default_rng(seed), (n, *batch))
    for t, f in zip(_tree_scan(m, x, span), monoid_scan(m, x)):
        assert t.dtype == f.dtype and np.array_equal(t, f)


def test_a_combine_that_divides_or_calls_a_function_has_no_rounding_bound():
    from scancheck.oracle.monoid_scan import rounding_bound

    ratio = Monoid(lambda a, b: (a[0] / b[0],), (np.float64(1),), name="ratio")
    assert rounding_bound(ratio, (np.ones(3),)) is None
    assert rounding_bound(SOFTMAX, SOFTMAX.draw(np.random.default_rng(0), (3,))) is None


@pytest.mark.parametrize("name", list(PROBES))
@pytest.mark.parametrize("reverse", [None, "flip", "suffix"])
@pytest.mark.parametrize("inclusive", [True, False])
def test_the_log_depth_scan_of_a_long_input_is_the_sequential_fold(name, reverse, inclusive):
    """Past SEQUENTIAL_MAX a monoid exact in its own arithmetic (integer leaves, or declared
    exact) is scanned by doubling: bit for bit the fold, in every convention, along either
    axis of a 2-D input."""
    from scancheck.oracle.monoid_scan import SEQUENTIAL_MAX

    m = PROBES[name]
    n = SEQUENTIAL_MAX + 37
    for shape, axis in (((n,), 0), ((3, n), 1)):
        x = m.draw(np.random.default_rng(n + axis), shape)
        fast = monoid_scan(m, x, inclusive, reverse, axis)
        slow = monoid_scan(m, x, inclusive, reverse, axis, sequential=True)
        for f, s in zip(fast, slow):
            assert f.dtype == s.dtype and np.array_equal(f, s)
    # The fold itself, not the doubling, where it is asked for or short.
    calls = []

    def counted(a, b):
        calls.append(1)
        return m.combine(a, b)
    c = Monoid(counted, m.identity, name="counted", exact=m.exact)
    monoid_scan(c, m.draw(np.random.default_rng(0), (n,)), inclusive, reverse)
    assert len(calls) < 64  # log-depth: a few dozen vectorized combines, not n
