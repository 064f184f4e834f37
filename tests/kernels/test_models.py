"""Schedule models: correct on every size, race-free (but one), their work and depth,
their rounding within bound, and the seeds' worked examples step by step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.core.operators import interval_expected, interval_input
from scancheck.engine.strategies import block_sizes, scan_data, scan_sizes
from scancheck.kernels.models import build_blelloch, build_hillis_steele_double, build_recursive
from scancheck.kernels.network import Network
from scancheck.kernels.registry import VARIANTS
from scancheck.oracle.bounds import Verdict, classify
from scancheck.oracle.exact import exact_scan

RACE_FREE = [n for n, v in VARIANTS.items() if not v.racy]


def _blocks(var, lo=2, hi=1024):
    return [b for b in (2**k for k in range(11))
            if max(lo, var.min_block) <= b <= hi and b % var.block_multiple == 0]


def _capacity(var, block, limit):
    return limit if var.capacity is None else min(limit, var.capacity(block, var.resolve_params(None)))


def _proof(net: Network) -> bool:
    got = net.run(interval_input(net.n), "interval")
    return bool(np.array_equal(got, interval_expected(net.n, net.inclusive)))


@pytest.mark.parametrize("name", list(VARIANTS))
def test_interval_proof_and_exact_sums_for_every_small_size(name):
    """Exhaustive for n up to 70 at blocks up to 64; ints match the exact oracle."""
    var = VARIANTS[name]
    rng = np.random.default_rng(0)
    for block in _blocks(var, hi=64):
        for n in range(1, _capacity(var, block, 70) + 1):
            net = var.build_model(n, block)
            assert _proof(net), f"{name} n={n} block={block}"
            x = rng.integers(-2**31, 2**31, n, dtype=np.int64)
            np.testing.assert_array_equal(net.run(x), exact_scan(x, inclusive=var.inclusive))


@pytest.mark.parametrize("name", list(VARIANTS))
@given(data=st.data())
def test_interval_proof_for_sampled_sizes_up_to_2048(name, data):
    var = VARIANTS[name]
    block = data.draw(st.sampled_from(_blocks(var)), label="block")
    n = data.draw(scan_sizes(block, _capacity(var, block, 2048)), label="n")
    assert _proof(var.build_model(n, block))


@pytest.mark.parametrize("name", RACE_FREE)
def test_race_free_models_have_no_hazards(name):
    var = VARIANTS[name]
    for block in _blocks(var, hi=256)[-2:]:
        n = _capacity(var, block, 5 * block + 3)
        assert var.build_model(n, block).hazards() == [], f"{name} block={block}"


def test_in_place_hillis_steele_is_reported_with_its_hazards():
    hazards = VARIANTS["hillis_steele_inplace"].build_model(64, 64).hazards(limit=100)
    assert hazards, "the in-place Hillis-Steele race was not found"
    h = hazards[0]
    assert h.region == "x" and h.writer != h.other and "d=" in h.step
    assert "thread" in str(h)


def test_warp_replay_from_the_last_warp_down_equals_the_ideal_run():
    # Later warps first: every read of an earlier warp's element sees the old value,
    # which is what a race-free schedule guarantees, so the racy kernel comes out right.
    net = VARIANTS["hillis_steele_inplace"].build_model(256, 256)
    x = np.random.default_rng(0).integers(0, 100, 256)
    np.testing.assert_array_equal(net.run(x, warp_order=list(range(7, -1, -1))), np.cumsum(x))


def test_hypothesis_finds_a_warp_order_under_which_the_race_gives_a_wrong_answer():
    from hypothesis import find, settings

    net = VARIANTS["hillis_steele_inplace"].build_model(256, 256)
    x = np.ones(256, dtype=np.int64)
    right = np.arange(1, 257)
    order = find(st.permutations(range(8)),
                 lambda o: not np.array_equal(net.run(x, warp_order=list(o)), right),
                 settings=settings(database=None, max_examples=200))
    assert not np.array_equal(net.run(x, warp_order=list(order)), right)
    # The same orders leave the double-buffered scan correct.
    safe = VARIANTS["hillis_steele_double"].build_model(256, 256)
    np.testing.assert_array_equal(safe.run(x, warp_order=list(order)), np.arange(256))


def _work_depth(name, n):
    return VARIANTS[name].build_model(n, n if name != "blelloch" and name != "brent_kung"
                                      else n // 2).metrics()


def test_work_and_depth_match_the_seeds_table():
    """Kogge-Stone: work n*log n - (n-1), depth log n.  Brent-Kung: work 2n - log n - 2,
    depth 2 log n - 2.  Blelloch: work 2(n-1) (identity combines counted), depth 2 log n - 1."""
    for n in (64, 256, 1024):
        lg = int(np.log2(n))
        ks = _work_depth("kogge_stone", n)
        assert (ks.work, ks.depth) == (n * lg - (n - 1), lg)
        bk = _work_depth("brent_kung", n)
        assert (bk.work, bk.depth) == (2 * n - lg - 2, 2 * lg - 2)
        bl = _work_depth("blelloch", n)
        assert (bl.work, bl.depth) == (2 * (n - 1), 2 * lg - 1)


@pytest.mark.parametrize("name", [n for n in RACE_FREE if "add" in VARIANTS[n].operators])
@given(data=st.data())
def test_float32_errors_stay_within_each_models_own_bound(name, data):
    var = VARIANTS[name]
    block = data.draw(st.sampled_from(_blocks(var, hi=256)))
    n = data.draw(scan_sizes(block, _capacity(var, block, 3000)))
    dist = data.draw(st.sampled_from(["integers", "uniform", "wide", "cancellation"]))
    x = data.draw(scan_data(n, "float32", dist))
    net = var.build_model(n, block)
    report = classify(x, net.run(x), net.metrics().output_depths, inclusive=var.inclusive)
    assert report.verdict != Verdict.BEYOND_BOUND, report.row()


def test_a_model_with_a_broken_step_is_caught():
    """Drop the last down-sweep combine of Brent-Kung: the interval proof fails and the
    float32 sums go beyond the bound."""
    net = VARIANTS["brent_kung"].build_model(64, 32)
    last = max(i for i, s in enumerate(net.steps) if s.combine)
    net.steps[last].dst = net.steps[last].dst[:-1]
    net.steps[last].a = net.steps[last].a[:-1]
    net.steps[last].b = net.steps[last].b[:-1]
    net.steps[last].thread = net.steps[last].thread[:-1]
    assert not _proof(net)
    x = np.random.default_rng(0).uniform(1, 2, 64).astype(np.float32)
    report = classify(x, net.run(x), net.metrics().output_depths)
    assert report.verdict == Verdict.BEYOND_BOUND and report.beyond.size >= 1


@pytest.mark.parametrize("name", ["decoupled_lookback", "recursive"])
def test_models_of_a_million_elements_do_linear_work_within_the_bound(name):
    """At 2**20 the grid models (what the verify path and the large checks build) stay
    linear in work -- four times the elements, at most 4.5 times the combines, where an
    accidental O(n^2) network would do 16 -- and their float32 scan is within its bound."""
    x = np.random.default_rng(0).standard_normal(2**20).astype(np.float32)
    small, big = (VARIANTS[name].build_model(n, 256) for n in (2**18, 2**20))
    metrics = big.metrics()  # once: a pass over the network's million-element steps
    assert metrics.work <= 4.5 * small.metrics().work
    rep = classify(x, big.run(x), metrics.output_depths, inclusive=VARIANTS[name].inclusive)
    assert rep.verdict != Verdict.BEYOND_BOUND, rep


# -- the seeds' worked examples ------------------------------------------------------


def test_seed_000_blelloch_up_sweep_and_down_sweep_states():
    out, snap = build_blelloch(8, 4).run(np.arange(1, 9), keep_snapshots=True)
    assert snap["up-sweep"].tolist() == [1, 3, 3, 10, 5, 11, 7, 36]
    assert snap["down d=1"].tolist() == [1, 3, 3, 0, 5, 11, 7, 10]
    assert snap["down d=2"].tolist() == [1, 0, 3, 3, 5, 10, 7, 21]
    assert snap["down d=4"].tolist() == [0, 1, 3, 6, 10, 15, 21, 28]
    assert out.tolist() == [0, 1, 3, 6, 10, 15, 21, 28]


def test_seed_001_double_buffered_trace():
    out, snap = build_hillis_steele_double(8, 8).run(np.arange(1, 9), keep_snapshots=True)
    rows = {k: v.reshape(2, 8).tolist() for k, v in snap.items()}
    assert rows["load"][0] == [0, 1, 2, 3, 4, 5, 6, 7]
    assert rows["offset=1"][1] == [0, 1, 3, 5, 7, 9, 11, 13]
    assert rows["offset=2"][0] == [0, 1, 3, 6, 10, 14, 18, 22]
    assert rows["offset=4"][1] == [0, 1, 3, 6, 10, 15, 21, 28]
    assert out.tolist() == [0, 1, 3, 6, 10, 15, 21, 28]


def test_seed_003_twenty_three_elements_at_block_size_four():
    out, snap = build_recursive(23, 4).run(np.ones(23, dtype=np.int64), keep_snapshots=True)
    assert snap["prefix0"].tolist() == [0, 1, 2, 3] * 5 + [0, 1, 2]
    assert snap["sums0"].tolist() == [4, 4, 4, 4, 4, 3]
    assert snap["prefix1"].tolist() == [0, 4, 8, 12, 0, 4]
    assert snap["sums1"].tolist() == [16, 7]
    assert snap["prefix2"].tolist() == [0, 16]
    assert snap["offsets1"].tolist() == [0, 4, 8, 12, 16, 20]
    assert out.tolist() == list(range(23))


@given(block=block_sizes(2, 64), n=st.integers(1, 300))
def test_recursive_levels_shrink_by_the_block_size(block, n):
    net = build_recursive(n, block)
    levels = [r for r in net.regions if r.startswith("sums")]
    sizes = [net.regions[r][1] for r in sorted(levels, key=lambda r: int(r[4:]))]
    assert sizes[-1] == 1 and all(a == -(-b // block) for a, b in zip(sizes, [n] + sizes))


SEGMENTED = [n for n, v in VARIANTS.items() if "segmented_add" in v.operators]


def _segmented_sums(x: np.ndarray, inclusive: bool) -> np.ndarray:
    """Each element's running sum since the latest head flag, written out plainly (not
    through the operator): what a segmented scan computes, as a (flag, value) scan."""
    out, flag, acc = np.zeros_like(x), 0, 0
    for k, (f, v) in enumerate(x.tolist()):
        if not inclusive:
            out[k] = (flag, acc)
        flag, acc = (f, v) if f else (flag, acc + v)
        if inclusive:
            out[k] = (flag, acc)
    return out


@pytest.mark.parametrize("name", SEGMENTED)
@given(data=st.data())
def test_segmented_variants_restart_the_sum_at_every_head_flag(name, data):
    """The head-flag monoid is non-commutative: a schedule that combined any two partial
    results in the wrong order, or carried a sum across a head, would differ here."""
    from scancheck.engine.strategies import elements_for, launches

    var = VARIANTS[name]
    n, block, _, _ = data.draw(launches(name, ops=("segmented_add",), dtypes_=("int64",),
                                        max_size=3000), label="launch")
    x = data.draw(elements_for("segmented_add", n, "int64"), label="x")
    got = var.build_model(n, block).run(x, "segmented_add")
    np.testing.assert_array_equal(got, _segmented_sums(x, var.inclusive))
