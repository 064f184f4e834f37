"""Cases, sizes and budgets: every scale is reached, each within its share of the time, and
a case rebuilds its data bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from scancheck.engine.cases import (
    DEFAULT_MAX_N,
    DRAW_SECONDS,
    Budget,
    Case,
    Sweep,
    TimeShare,
    companions,
    ladder,
    scaled_sizes,
    share_time,
)


@given(st.data())
def test_scaled_sizes_stay_in_range(data):
    max_n = data.draw(st.integers(1, 2**26))
    assert 1 <= data.draw(scaled_sizes(max_n)) <= max_n


@pytest.mark.parametrize("max_n", [2**20, 2**24])
def test_scaled_sizes_reach_every_scale_every_tile_edge_and_tile_multiple(max_n):
    """Within a scale 2**k: each edge 2**k + d and the multiples of smaller tiles
    m * 2**j + d, |d| <= 2 (here 3 * 2**(k-1) + d); and the top scale, drawing scales
    evenly."""
    top = max_n.bit_length() - 1
    # Each search only has to reach its n: Hypothesis's shrinking of what it found (half of
    # the test's time) could tell nothing more.
    drawn = [Phase.generate]
    for k in (0, 5, 11, top - 1):
        lo = 1 << k
        wanted = {lo + d for d in range(-2, 3)} | (
            {3 * lo // 2 + d for d in (-2, 2)} if k > 1 else set())
        for n in sorted(v for v in wanted if v >= 1):
            find(scaled_sizes(max_n, (k,)), lambda v, n=n: v == n,
                 settings=settings(max_examples=5000, database=None, phases=drawn))
    find(scaled_sizes(max_n), lambda n: n > max_n // 2,
         settings=settings(max_examples=1000, database=None, phases=drawn))


def test_companions_are_drawn_within_the_example_s_scale_the_same_every_time():
    example = Case(3000, "int32", "uniform", 12345)
    more = companions(example, 31, ("int32", "int64"), ("uniform", "integers"), 2**20)
    assert more == companions(example, 31, ("int32", "int64"), ("uniform", "integers"), 2**20)
    assert len(more) == 31 and len({c.n for c in more}) > 10
    assert all(2046 <= c.n <= 4096 for c in more)  # the scale of 2**11, and its edges' +-2
    assert {c.dtype for c in more} == {"int32", "int64"} and len({c.seed for c in more}) == 31
    assert all(c.n <= 2500 for c in companions(example, 31, ("int32",), ("uniform",), 2500))
    assert companions(example, 0, ("int32",), ("uniform",), 2**20) == []
    # Tile multiples and their neighbours: 47 * 64 + d (d in [-2, 2]) among the companions
    # of 200 examples at the scale of 2**11; and [3000, 3010] drawn at least half as often
    # as an even draw over the scale would (the tile multiples take a quarter of the draws).
    sizes = [c.n for seed in range(200)
             for c in companions(Case(2048, "int32", "uniform", seed), 31, ("int32",),
                                 ("uniform",), 2**20)]
    assert {3006, 3007, 3008, 3009, 3010} <= set(sizes)
    assert sum(3000 <= n <= 3010 for n in sizes) > 0.5 * len(sizes) * 11 / 2048


def test_each_scale_gets_about_the_same_share_of_a_search_s_time():
    """A case costs 0.2 ms plus 12 ns an element (integers exact on numpy.cumsum, this
    project's CPU machine): the cheap scales run companions and are drawn more often, so
    that every scale costs about as much as the top one, where each costs the same count
    of examples when drawn evenly (the top few scales then took nine tenths of the time)."""
    def cost(n):
        return 2e-4 + 12e-9 * n

    timings = [(n, cost(n)) for n in (1, 3, 7, 16, 31, 65, 4097, 2**14, 2**17, 2**20)]
    share = share_time(timings, 2**20)
    draws = {k: share.scales.count(k) for k in range(21)}
    assert set(share.scales) == set(range(21)) and draws[20] == 1 and share.companions[20] == 0
    assert share.companions[9] >= 10 and draws[9] >= 5  # n = 1000: cheap
    seconds = [draws[k] * (DRAW_SECONDS + (1 + share.companions[k]) * cost(1.5 * 2**k))
               for k in range(21)]
    assert max(seconds) / min(seconds) < 2.5, seconds
    assert share_time([], 4096) == TimeShare(tuple(range(13)), (0,) * 13)


def test_ladder_walks_every_scale_to_the_top_with_every_dtype_and_distribution():
    rungs = ladder(("float32", "float64"), ("integers", "dyadic"), 2**20, empty=True)
    pairs = {(d, s) for d in ("float32", "float64") for s in ("integers", "dyadic")}
    small, scales = [rungs[0], *rungs[2:5]], [c.n for c in rungs[5:]]
    # n = 0 second: the first call has outputs, a first-call-only bug something to show in.
    assert rungs[0].n > 0 and rungs[1].n == 0
    assert {(c.dtype, c.distribution) for c in small} == pairs
    assert all(c.n <= 17 for c in small)  # every kind of data early, where it is cheap
    assert scales[-1] == 2**20 and scales == sorted(scales)
    assert all(any(abs(n - 2**k) <= 1 for n in scales) for k in range(21))  # every scale's edge
    assert {(c.dtype, c.distribution) for c in rungs[5:]} == pairs
    assert ladder(("int32",), ("uniform",), 100, empty=False)[0].n == 1


def test_cases_rebuild_their_data_bit_for_bit():
    a = Case(1000, "float32", "wide", 7).data("add")
    assert a.tobytes() == Case(1000, "float32", "wide", 7).data("add").tobytes()
    assert Case(10, "float64", "uniform", 1).data("recurrence").shape == (10, 2)


def test_a_case_drawn_anew_is_another_seeds_draw_the_same_every_time():
    """``anew`` draws from a seed of its own (the case's and n decide it): not the first
    values of the case's draw, which ``with_n`` keeps, and the same case every time."""
    window = Case(5063, "float64", "overflow", 3, drawn=9000, skip=700)
    fresh = window.anew(4999)
    assert (fresh.n, fresh.drawn, fresh.skip) == (4999, 0, 0) and fresh.seed != window.seed
    assert fresh == window.anew(4999) and fresh.seed != window.anew(4935).seed
    assert not np.array_equal(fresh.data("add"), window.with_n(4999).data("add"))
    assert not np.array_equal(fresh.data("add"), Case(4999, "float64", "overflow", 3).data("add"))


def test_a_case_drawn_again_is_a_fresh_copy_of_the_same_bits():
    """Inputs are kept to be copied, not drawn again: each call still gets an array of its
    own, which a target may write into, and the next call gets the case's own bits."""
    from scancheck.engine.cases import _DRAWN

    case = Case(5000, "float64", "cancellation", 11)
    first = case.data("add")
    drawn = case._draw("add")
    first[:] = 0
    again = case.data("add")
    assert again is not first and again.tobytes() == drawn.tobytes()
    assert (case, "add") in _DRAWN and case.data("max").tobytes() == drawn.tobytes()
    big = Case(2**23 + 1, "float64", "uniform", 0)  # a quarter of what is kept, at most
    assert big.data("add").nbytes > _DRAWN.limit // 4 and (big, "add") not in _DRAWN
    assert _DRAWN.nbytes <= _DRAWN.limit


@pytest.mark.parametrize("kwargs, message", [
    (dict(seconds=0), "budget=0 seconds must be a positive number"),
    (dict(seconds=float("nan")), "positive number"),
    (dict(seconds=True), "positive number"),
    (dict(max_examples=0), "max_examples=0 must be a positive integer"),
    (dict(max_n=-5), "max_n=-5 must be a positive integer"),
    (dict(max_n=2.5), "max_n=2.5"),
])
def test_bad_budgets_are_refused_naming_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Budget(**kwargs)


def test_the_budget_picks_the_largest_n_by_device_within_caps():
    assert Budget().top("gpu") == DEFAULT_MAX_N["gpu"] >= 2**24
    assert Budget().top("cpu") == DEFAULT_MAX_N["cpu"] >= 2**20
    assert Budget(max_n=1000).top("gpu", 300, None) == 300


@given(st.integers(0, 2**32 - 1), st.integers(9, 24), st.integers(0, 200))
def test_a_sweep_meets_every_residue_of_every_block_within_as_many_sizes_of_a_scale(seed, k,
                                                                                  skip):
    """Any 2**j running sizes of one scale hold every residue modulo 2**j (j = 5, 6, 7),
    whatever the seed and wherever the run starts: a band of 1/64 of the sizes is met within
    64 cases of a scale, where 64 random draws miss it a third of the time."""
    sweep = Sweep(seed, 2**25, ("int32",), ("uniform",))
    sizes = []  # a scale of 2**9 gives 1024 sizes before it is done: more than asked here
    while len(sizes) < skip + 128:
        case = sweep.case()
        sweep.took(case.n, 1.0)  # every scale alike: the sweep goes round them in turn
        if case.n.bit_length() - 1 == k:
            sizes.append(case.n)
    for j in (5, 6, 7):
        run = sizes[skip:skip + 2**j]
        assert {n % 2**j for n in run} == set(range(2**j)), j
    assert all(2**k <= n < 2**(k + 1) for n in sizes)


def test_a_sweep_gives_every_scale_64_sizes_cheapest_first_before_more_to_any():
    """Rounds: every scale to 64 sizes (each residue modulo 64 once), the cheapest first (a
    case of 2**k elements costing more as k grows; 2**20's known from the ladder), then
    every scale to 128; a scale that has given each of its sizes twice (2**5: 64) is done."""
    sweep = Sweep(1, 2**20, ("int32",), ("uniform",))
    for k in range(5, 21):  # the ladder's rungs: what a case of each scale costs
        sweep.took(2**k, 2.0**(k - 25))
    seen = []
    for _ in range(64 * 16 + 64 * 15):
        case = sweep.case()
        k = case.n.bit_length() - 1
        seen.append(k)
        sweep.took(case.n, 2.0**(k - 25))
    first = seen[:64 * 16]
    assert first == [k for k in range(5, 21) for _ in range(64)]
    assert 5 not in seen[64 * 16:] and seen[64 * 16:] == [k for k in range(6, 21) for _ in
                                                          range(64)]




@pytest.mark.parametrize("op", ["add", "recurrence"])
def test_a_cut_case_is_the_first_elements_of_its_draw_at_every_smaller_n(op):
    case = Case(100, "float32", "uniform", 7)
    whole = case.data(op)
    cut = case.cut(40)
    assert (cut.data(op) == whole[:40]).all()
    assert (cut.with_n(3).data(op) == whole[:3]).all()
    assert cut.describe() == {**case.describe(), "n": 40, "drawn": 100}


@pytest.mark.parametrize("op", ["add", "recurrence"])
def test_a_dropped_case_is_its_input_less_its_first_elements_at_every_smaller_n(op):
    case = Case(100, "float32", "uniform", 7)
    whole = case.data(op)
    tail = case.dropped(64)
    assert tail.n == 36 and (tail.data(op) == whole[64:]).all()
    assert (tail.with_n(3).data(op) == whole[64:67]).all()
    assert (tail.cut(5).data(op) == whole[64:69]).all()
    assert (tail.dropped(30).data(op) == whole[94:]).all()
    assert tail.describe() == {**case.describe(), "n": 36, "drawn": 100, "skip": 64}

