"""A user's Monoid is validated at the edge, and the probe monoids are monoids that see order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.core.monoids import PROBES, Monoid, MonoidError, load_monoid
from scancheck.oracle.monoid_scan import broken_law, monoid_scan


def _add(a, b):
    return (a[0] + b[0],)


@pytest.mark.parametrize("kwargs, error, words", [
    ({"combine": 3, "identity": (0,)}, TypeError, "combine=3 must be callable"),
    ({"combine": _add, "identity": ()}, TypeError, "non-empty tuple of scalars"),
    ({"combine": _add, "identity": np.zeros(2)}, TypeError, "non-empty tuple of scalars"),
    ({"combine": _add, "identity": ([0, 1],)}, TypeError, "identity[0]=[0, 1] must be a scalar"),
    ({"combine": _add, "identity": ("x",)}, TypeError, "identity[0]='x'"),
    ({"combine": _add, "identity": (0,), "elements": 5}, TypeError,
     "elements=5 must be a Hypothesis strategy of one element"),
])
def test_a_bad_monoid_is_refused_naming_the_argument(kwargs, error, words):
    with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")
                       .replace("(", r"\(").replace(")", r"\)")):
        Monoid(name="m", **kwargs)


def test_a_monoid_needs_a_name():
    with pytest.raises(ValueError, match="name=''"):
        Monoid(_add, (0,), name="")


@pytest.mark.parametrize("combine, words", [
    (lambda a, b: (a[0] + b[0], a[0]), "returned 2 leaves; it must return a tuple of 1"),
    (lambda a, b: a[0] + b[0], "returned ndarray"),
    (lambda a, b: ((a[0] + b[0]).astype(np.float64),), "leaf 0 of dtype float64; the identity "
                                                       "makes it int64"),
    (lambda a, b: (np.zeros(3, np.int64),), "leaf 0 of shape (3,) for operands of shape (5,)"),
])
def test_a_combine_that_returns_the_wrong_leaves_is_named(combine, words):
    m = Monoid(combine, (np.int64(0),), name="bad")
    x = m.draw(np.random.default_rng(0), (5,))
    with pytest.raises(MonoidError, match=words.replace("(", r"\(").replace(")", r"\)")):
        m.apply(x, x)


# What a combine may return for operands of shape (), (3,) or (2, 3) (arrays, NumPy scalars
# or an exact fold's Python numbers): a leaf of each shape, each leaf dtype, objects and NumPy
# scalars among them, as a tuple or a list, of one leaf too many.
_SHAPES = [(), (3,), (2, 3)]


@st.composite
def _returned(draw):
    shape = draw(st.sampled_from(_SHAPES))
    dtypes = draw(st.lists(st.sampled_from(["int64", "float32", "uint8", "bool"]), min_size=1,
                           max_size=3))
    m = Monoid(_add, tuple(np.zeros((), d)[()] for d in dtypes), name="m")
    a = tuple(np.zeros(shape, d) if shape else draw(st.sampled_from(
        [np.zeros((), d), np.zeros((), d)[()], 0])) for d in dtypes)
    leaves = []
    for d in dtypes + draw(st.lists(st.just("int64"), max_size=1)):
        v = np.ones(draw(st.sampled_from([shape, *_SHAPES])),
                    draw(st.sampled_from([d, "int64", "object"])))
        leaves.append(v[()] if v.ndim == 0 and draw(st.booleans()) else v)
    kind = draw(st.sampled_from([tuple, list]))
    return m, kind(leaves), a, draw(st.booleans())


def _outcome(f):
    try:
        return [(v.dtype, v.shape, v.tobytes()) for v in f()]
    except MonoidError as exc:
        return str(exc)


@given(_returned())
def test_a_combines_result_is_checked_alike_with_or_without_the_fast_path(case):
    """checked's shortcut for a tuple of leaves that are already right takes no leaf the
    leaf-by-leaf check refuses, and returns what it returns."""
    m, out, a, exact = case
    assert _outcome(lambda: m.checked(out, a, exact)) == _outcome(lambda: m._checked(out, a, exact))


@pytest.mark.parametrize("leaf, words", [
    (np.zeros(5, np.int32), "leaf 0 of dtype int32"),
    (np.zeros(4, np.int64), "leaf 0 of shape (4,)"),
    (np.int64(3), None),  # a scalar: broadcast to the operands' shape
])
def test_a_tuple_of_arrays_still_has_its_leaves_checked(leaf, words):
    m = Monoid(_add, (np.int64(0),), name="m")
    a = (np.zeros(5, np.int64),)
    if words is None:
        (got,) = m.checked((leaf,), a)
        assert got.shape == (5,) and got.dtype == np.int64
        return
    with pytest.raises(MonoidError, match=words.replace("(", r"\(").replace(")", r"\)")):
        m.checked((leaf,), a)


def test_an_element_strategy_of_the_wrong_form_is_named():
    m = Monoid(_add, (np.int32(0),), name="m", elements=lambda rng, shape: (np.zeros(shape),))
    with pytest.raises(MonoidError, match="elements"):
        m.draw(np.random.default_rng(0), (4,))


@pytest.mark.parametrize("name", list(PROBES))
def test_every_probe_is_a_monoid(name):
    assert broken_law(PROBES[name], 2000, 1) is None


@pytest.mark.parametrize("name", ["affine mod 2**32", "sequence hash"])
def test_the_exact_probes_see_every_swap_skip_and_duplicate(name):
    """Swapping two neighbours, dropping one element or doubling one changes the total of
    every drawn sequence (so that any order bug shows on one case)."""
    m = PROBES[name]
    rng = np.random.default_rng(0)
    seen = {"swap": 0, "skip": 0, "duplicate": 0}
    for _ in range(50):
        x = m.draw(rng, (8,))
        total = tuple(v[-1] for v in monoid_scan(m, x))
        k = int(rng.integers(0, 7))
        order = {"swap": [*range(k), k + 1, k, *range(k + 2, 8)],
                 "skip": [i for i in range(8) if i != k],
                 "duplicate": [*range(k + 1), k, *range(k + 1, 8)]}
        for what, idx in order.items():
            y = tuple(v[idx] for v in x)
            seen[what] += tuple(v[-1] for v in monoid_scan(m, y)) != total
    assert min(seen.values()) == 50, seen
    assert not m.commutative


def test_the_bicyclic_probe_does_not_commute():
    m = PROBES["bicyclic"]
    a, b = (np.array([1]), np.array([0])), (np.array([0]), np.array([1]))
    assert m.apply(a, b) != m.apply(b, a)


def test_the_mixed_probe_has_leaves_of_several_dtypes():
    assert len(set(PROBES["sequence hash"].dtypes)) > 1


@pytest.mark.parametrize("n", [1, 8, 5000, 2**20])
def test_the_float_probe_never_rounds_in_any_association_order(n):
    """Multipliers +-1 (float32) and offsets k * 2**-30 (float64) whose sum over n elements
    stays below 2**22: every partial result is a float64 number, so any order gives the
    same bits; and the offsets have low bits that float32 and integers lose."""
    m = PROBES["signed affine (float32, float64)"]
    assert m.exact and m.floats and not m.rounds and not m.commutative
    assert m.dtypes == ("float32", "float64")
    m_leaf, c_leaf = m.draw(np.random.default_rng(n), (n,))
    assert set(np.unique(m_leaf)) <= {-1.0, 1.0}
    assert np.abs(c_leaf).max() * n <= 2**22 and ((c_leaf * 2**30) % 1 == 0).all()
    if n > 1:
        assert (c_leaf != c_leaf.astype(np.float32)).any() and (c_leaf % 1 != 0).any()
    x = (m_leaf[:300], c_leaf[:300])  # drawn at n, folded on its first elements
    exact = Monoid(m.combine, m.identity, name="rational")  # not exact: folded on Fractions
    from scancheck.oracle.monoid_scan import exact_monoid_scan
    for f, w in zip(monoid_scan(m, x), exact_monoid_scan(exact, x)):
        assert np.array_equal(f, w)


def test_a_monoid_declared_exact_that_rounds_breaks_its_laws():
    """Declared exact, a float combine that rounds is held to its own arithmetic: its laws
    fail there, so no scan of it is judged exactly against one order."""
    def add(a, b):
        return (a[0] + b[0],)

    rounding = Monoid(add, (np.float32(0),), name="rounding sum", commutative=True,
                      elements=lambda rng, shape: (rng.normal(0, 1, shape).astype(np.float32),),
                      exact=True)
    broken = broken_law(rounding, 256, 0)
    assert broken is not None and "associativity" in broken.line("rounding sum")


@pytest.mark.parametrize("locator, words", [
    ("scancheck.core.monoids", "named module:ATTR"),
    ("no_such_module_x:M", "cannot be loaded"),
    ("scancheck.core.monoids:PROBES", "is a dict, not a scancheck.Monoid"),
])
def test_load_monoid_names_what_is_wrong(locator, words):
    with pytest.raises(ValueError, match=words):
        load_monoid(locator)


def test_load_monoid_keeps_its_locator():
    m = load_monoid("scancheck.controls.tuples:ONLINE_SOFTMAX_FORGETTING_A_RESCALE")
    assert m.locator == "scancheck.controls.tuples:ONLINE_SOFTMAX_FORGETTING_A_RESCALE"


# -- an element domain given as a Hypothesis strategy ----------------------------------

def _bicyclic_on(elements=None):
    b = PROBES["bicyclic"]
    return Monoid(b.combine, b.identity, name="bicyclic", elements=elements)


NON_NEGATIVE = st.tuples(st.integers(0, 50), st.integers(0, 50))


def test_a_monoid_only_on_its_domain_keeps_its_laws_there_and_breaks_them_elsewhere():
    """The bicyclic combine is a monoid on pairs of non-negative integers: its laws hold on
    every draw of that strategy, and break on drawn int64 pairs or signed small ones."""
    assert all(broken_law(_bicyclic_on(NON_NEGATIVE), 1000, seed) is None for seed in range(8))
    assert broken_law(_bicyclic_on(), 1000, 0) is not None
    signed = _bicyclic_on(st.tuples(st.integers(-50, 50), st.integers(-50, 50)))
    assert broken_law(signed, 1000, 0) is not None


def test_a_strategys_draws_are_in_its_domain_and_the_same_for_the_same_seed():
    m, again = _bicyclic_on(NON_NEGATIVE), _bicyclic_on(NON_NEGATIVE)
    x = m.draw(np.random.default_rng(7), (3, 500))
    assert all(v.dtype == np.int64 and v.shape == (3, 500) for v in x)
    assert all(((v >= 0) & (v <= 50)).all() for v in x)
    assert len(np.unique(x[0])) > 20  # many elements, not one repeated
    y = again.draw(np.random.default_rng(7), (3, 500))  # a fresh monoid: its own pools
    assert all(np.array_equal(u, v) for u, v in zip(x, y))


@pytest.mark.parametrize("elements, identity, words", [
    (st.integers(-5, 5), (np.uint8(0),), "drew -"),
    (st.integers(0, 3), (np.int64(0), np.int64(0)), "must be a tuple of 2 scalars"),
    (st.integers().filter(lambda v: False), (np.int64(0),), "drew no element"),
])
def test_a_strategy_that_draws_no_element_of_the_leaves_is_named(elements, identity, words):
    m = Monoid(lambda a, b: a, identity, name="m", elements=elements)
    with pytest.raises(MonoidError, match=words):
        m.draw(np.random.default_rng(0), (4,))
