"""The search and the shrinking: the budget bounds a search, every scale is walked, and a
failure ends at the smallest n that fails."""

from __future__ import annotations

import time

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from scancheck.engine.cases import Budget, Case, ladder
from scancheck.engine.search import search, shrink, smallest_failing


def in_band(n: int) -> bool:
    """A bug of one residue past some size: 1/64 of the sizes past 5000, no tile edge."""
    return n > 5000 and n % 64 == 7


def test_a_search_stops_when_its_budget_is_spent():
    def slow(case):
        time.sleep(0.01)

    t0 = time.monotonic()
    found = search(slow, ("float32",), ("uniform",), 2**20, Budget(0.5))
    assert found.failing is None and found.budget_spent
    assert time.monotonic() - t0 < 2.0
    assert found.cases > 10



def test_a_budget_the_ladder_spent_ends_the_search_there(monkeypatch):
    """The whole ladder, then nothing drawn: the search says its budget was spent, and
    Hypothesis is not started for an example it could not run."""
    def unstarted(*args, **kwargs):
        raise AssertionError("find started with no time left")

    monkeypatch.setattr("scancheck.engine.search.find", unstarted)
    found = search(lambda case: time.sleep(1e-3), ("int32",), ("uniform",), 2**10, Budget(1e-3))
    assert found.failing is None and found.budget_spent
    assert found.cases == len(ladder(("int32",), ("uniform",), 2**10, True))



def test_no_budget_cuts_the_ladder_short_of_the_largest_n():
    """A budget smaller than the ladder's cost still reaches the top scale: a bug that needs
    many tiles cannot hide behind a short budget."""
    def slow(case):
        time.sleep(0.02)
        return "wrong" if case.n > 262_144 else None

    found = search(slow, ("int32",), ("uniform",), 2**20, Budget(0.01))
    assert found.failing is not None and found.failing.n > 262_144



def test_a_search_reaches_the_largest_n_and_says_so():
    found = search(lambda case: None, ("int32",), ("uniform",), 2**20, Budget(5, max_examples=50))
    assert found.largest_n == 2**20 and not found.budget_spent



def test_a_failure_past_many_tiles_is_found_and_taken_to_its_threshold():
    """A bug that strikes past n = 262,144 (1024 tiles of 256): the default sizes reach it,
    and the smallest failing n is exactly one past the threshold."""
    def check(case):
        return "wrong" if case.n > 262_144 else None

    found = search(check, ("int32",), ("uniform",), 2**20, Budget(5))
    assert found.failing is not None and found.failing.n > 262_144
    smallest = smallest_failing(lambda c: check(c) is not None, found.failing)
    assert smallest.n == 262_145
    # With the old fixed largest n of 5000, nothing fails.
    assert search(check, ("int32",), ("uniform",), 5000, Budget(1)).failing is None



@given(st.integers(1, 3000), st.integers(2, 10**6))
def test_smallest_failing_finds_any_threshold(threshold, top):
    top = max(top, threshold)
    case = Case(top, "int32", "uniform", 0)
    assert smallest_failing(lambda c: c.n >= threshold, case).n == threshold



def test_smallest_failing_walks_up_from_one_before_it_bisects():
    # Fails at 65 and past 4000 only: the walk finds 65, where bisection alone would not.
    case = Case(5000, "int32", "uniform", 0)
    assert smallest_failing(lambda c: c.n == 65 or c.n > 4000, case).n == 65



@given(st.sets(st.integers(1, 5000), max_size=8), st.integers(2, 5000))
def test_smallest_failing_returns_the_found_n_or_the_last_that_failed(failing, top):
    """What the caller keeps of each failure it is told of: only the last."""
    last = []

    def fails(c):
        if c.n in failing:
            last.append(c.n)
        return c.n in failing

    n = smallest_failing(fails, Case(top, "int32", "uniform", 0)).n
    assert n == top or n == last[-1]



def test_hypothesis_draws_dtypes_and_distributions_in_the_search():
    seen = set()

    def check(case):
        seen.add((case.dtype, case.distribution))

    search(check, ("float32", "float64"), ("uniform", "wide"), 4096, Budget(2, max_examples=200))
    assert len(seen) == 4
    assert np.isfinite(Case(5, "float32", "uniform", 1).data("add")).all()



def test_a_case_too_costly_for_the_time_left_is_cut_to_fit():
    """One kind of data is slow (1 s per 2**18 elements): after the ladder (about 0.7 s here),
    each case Hypothesis draws of it is cut to what the time left allows at the rate measured,
    so the search ends near its budget instead of a whole large case past it."""
    t0 = time.monotonic()
    over = []

    def check(case):
        if case.distribution == "slow":
            left = t0 + 2 - time.monotonic()
            # The rate is measured on a loaded machine too, so it only errs towards smaller cuts.
            over.append(case.n / 2**18 - max(left, 0.0))
            time.sleep(case.n / 2**18)

    found = search(check, ("float64",), ("fast", "slow"), 2**17, Budget(2))
    assert found.budget_spent and found.largest_n == 2**17
    # The ladder's slow rungs run whole (up to 0.5 s at n = 2**17), before the deadline.
    assert max(over) < 0.05, max(over)
    assert time.monotonic() - t0 < 2 + 1.0



def test_a_bounded_budget_stops_the_ladder_and_says_where():
    """The command line's budget bounds the ladder too: a check costing 1 us an element
    stops short of 2**20 within about its seconds, and names the first rung it left."""
    def slow(case):
        time.sleep(1e-3 + 1e-6 * case.n)
        return "wrong" if case.n > 2**19 else None

    t0 = time.monotonic()
    found = search(slow, ("int32",), ("uniform",), 2**20, Budget(0.3, bounded=True))
    took = time.monotonic() - t0
    assert found.failing is None and found.budget_spent  # the bug lies past its reach
    assert found.short_of is not None and found.largest_n < found.short_of <= 2**20
    assert found.largest_n >= 2**10  # ... but it went as far as the seconds allowed
    assert took < 0.3 + 0.5  # the rung it predicted would end past the seconds never ran
    whole = search(slow, ("int32",), ("uniform",), 2**20, Budget(0.3))
    assert whole.short_of is None and whole.failing is not None  # unbounded: walked whole



def test_a_search_finds_a_bug_of_one_residue_modulo_64_past_5000_within_seconds():
    """No size of the ladder lies in the band; a second of draws and sweeps meets it."""
    found = search(lambda c: "wrong" if in_band(c.n) else None, ("int32",), ("uniform",),
                   2**20, Budget(1.0))
    assert found.failing is not None and in_band(found.failing.n)



def test_a_shrink_takes_a_band_failure_down_its_residues_to_the_smallest_n():
    """From every n the search saw fail, the smallest first; down the sizes of its residue
    modulo 64 to 5063, and every n below it checked: the smallest, proven."""
    seen = [Case(101_255, "int32", "uniform", 3), Case(31_047, "int32", "uniform", 4)]
    calls = []

    def fails(c):
        calls.append(c.n)
        return in_band(c.n)

    shrunk = shrink(fails, seen, seconds=30.0)
    assert shrunk.case == Case(5063, "int32", "uniform", 4) and shrunk.minimal
    assert 31_047 not in calls and 101_255 not in calls  # the search's failures: not again
    assert calls[-1] == 5062  # every n from the walk's end up to 5063 checked...
    assert set(range(300, 5063)) <= set(calls)
    assert [n for n in calls if in_band(n)][-1] == 5063  # ...and the last that failed, 5063



def test_a_shrink_draws_from_another_seed_where_its_own_draws_smaller_pass():
    """A failure some data show only (an overflow in the last tile, say): the case's own
    seed fails at its size alone, its draws at the smaller sizes of the residue pass, and
    the shrink takes the band down on other seeds' draws to 5063."""
    seen = Case(101_255, "float64", "overflow", 3, drawn=180_000, skip=7_000)

    def fails(c):
        return in_band(c.n) and (c.seed != 3 or c.n == seen.n)

    shrunk = shrink(fails, [seen], seconds=30.0, tails=True)
    assert shrunk.case.n == 5063 and shrunk.minimal and shrunk.case.seed != 3


def test_a_shrink_goes_on_down_on_the_plain_data_where_no_draw_of_its_own_fails():
    """A logic error of a band first met on overflowing data, which show it on one draw in
    a few (the bound of a sum that overflowed is infinite): where no smaller draw of them
    fails, the plain data, which show it at every size of the band, take it to 5063."""
    seen = Case(5255, "float64", "overflow", 3, drawn=12_999, skip=6_848)

    def fails(c):
        return in_band(c.n) and (c.distribution == "integers" or c == seen)

    assert shrink(fails, [seen], seconds=30.0, tails=True).case == seen
    shrunk = shrink(fails, [seen], seconds=30.0, tails=True, plain="integers")
    assert (shrunk.case.n, shrunk.case.distribution, shrunk.minimal) == (5063, "integers", True)
    # Data of its own that fail smaller are kept: the plain data are the last resort.
    other = shrink(lambda c: in_band(c.n), [seen], seconds=30.0, tails=True, plain="integers")
    assert (other.case.n, other.case.distribution) == (5063, "overflow")


def test_a_shrink_keeps_a_failing_tail_where_a_case_drawn_smaller_moves_it():
    """A bug of the last partial tile (a NaN read as zero there, in the band) fails on
    the data whose special the draw put in that tile: drawn anew at the smaller sizes of
    its residue the special leaves the tile before 5063 (5255 here), but the same input
    less its first elements keeps it down to 5063."""
    where = Case(21_447, "float32", "lone specials", 679)
    x = where.data("add")
    tile = slice(where.n - where.n % 64, where.n)

    def fails(c):
        data = c.data("add")
        return in_band(c.n) and bool(np.isnan(data[c.n - c.n % 64:]).any())

    assert np.isnan(x[tile]).any(), "a seed whose special lies in the last tile"
    shrunk = shrink(fails, [where], seconds=30.0, tails=True)
    assert shrunk.case.n == 5063 and shrunk.minimal
    assert shrunk.case.skip > 0  # the tail of a larger case's input
    assert shrink(fails, [where], seconds=0.0).case.n > 5063  # redrawn cases alone


def test_a_shrink_of_a_tail_bug_past_a_size_reaches_its_threshold_one_element_at_a_time():
    """A NaN read as zero in the last tile past 4000 elements: the cases drawn anew at
    4001 to 4003 put their special elsewhere, but the input of 4004 less its first three
    (an odd count: a step of one among them) fails at 4001, the threshold."""
    def fails(c):
        data = c.data("add")
        return c.n > 4000 and bool(np.isnan(data[(c.n - 1) // 64 * 64:]).any())

    where = Case(4004, "float32", "lone specials", 16)
    assert fails(where) and not any(fails(where.with_n(n)) for n in range(4001, 4004))
    shrunk = shrink(fails, [where], seconds=30.0, tails=True)
    assert (shrunk.case.n, shrunk.case.skip, shrunk.minimal) == (4001, 3, True)


def test_a_shrink_out_of_time_says_it_found_the_smallest_failing_n_not_that_it_is():
    failed = [Case(101_255, "int32", "uniform", 3)]
    shrunk = shrink(lambda c: in_band(c.n), failed, seconds=0.0)
    assert shrunk.case.n == 5063 and not shrunk.minimal
    # A bug below the walk's end, or past a threshold the walk reaches, is proven at once.
    assert shrink(lambda c: c.n >= 77, failed, seconds=0.0) == (
        type(shrunk)(failed[0].with_n(77), True))



def test_a_shrink_of_no_answer_takes_its_threshold_alone():
    """Where the target stops answering (it raises from some n), the threshold is told."""
    shrunk = shrink(lambda c: c.n >= 3000, [Case(70_000, "int32", "uniform", 0)], 0.0,
                    bands=False)
    assert shrunk.case.n == 3000 and shrunk.minimal


def test_the_cases_a_known_bug_was_seen_on_run_before_anything_is_drawn():
    """A bug of one case that neither the ladder nor a short budget's draws meet: the search
    alone misses it; handed that case first, it finds it there, in one case."""
    needle = Case(9, "int64", "b", 4242)

    def wrong_at_the_needle(case):
        return "wrong" if case == needle else None

    dists = ("a", "b", "c")
    assert search(wrong_at_the_needle, ("int64",), dists, 2**10, Budget(1e-3)).failing is None
    found = search(wrong_at_the_needle, ("int64",), dists, 2**10, Budget(1e-3), first=(needle,))
    assert found.failing == needle and found.cases == 1
