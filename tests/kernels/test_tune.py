"""The tuned launch table: data the registry reads, chosen from a tuning run's timings, and
never naming a launch that ``verify`` does not compare with its model.  The last test
runs the look-back on a GPU (skipped without one, saying so)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scancheck import bench, verify
from scancheck.kernels.registry import VARIANTS, tuned_table
from scancheck.kernels.tune import choose, main, write_table

LOOKBACK = VARIANTS["decoupled_lookback"]


def _allowed(var):
    return [(b, var.resolve_params(p)) for b, p in var.candidates]


def _sweep(times: dict[int, list[float]], dtype: str = "float32") -> dict:
    """A tuning run whose candidate i takes times[k][i] ms at 2^k."""
    return {"device": "test", "date": "today", "results": [
        {"variant": LOOKBACK.name, "dtype": dtype, "log2_n": k, "memcpy_ms": 1.0,
         "torch_ms": 2.0, "cub_ms": 3.0,
         "configs": [{"block": b, "params": p, "ms": ms}
                     for (b, p), ms in zip(LOOKBACK.candidates, row)]}
        for k, row in times.items()]}


def test_the_shipped_table_names_only_candidates_for_every_dtype_and_size():
    table = tuned_table()
    assert LOOKBACK.name in table
    for dtype in ("float32", "float64", "int32", "int64"):
        assert table[LOOKBACK.name][dtype], dtype
        for k in range(0, 35):
            block, params = LOOKBACK.tuned(dtype, 2**k)
            assert (block, params) in _allowed(LOOKBACK), (dtype, k, block, params)
            LOOKBACK.check(2**k, block, dtype, "add", params, smem_limit=227 * 1024)


def test_a_table_row_outside_the_candidates_is_refused(tmp_path):
    bad = {"decoupled_lookback": {"float32": [
        {"up_to_log2": 20, "block": 1024, "params": {"items": 16}}]}}
    path = tmp_path / "tuned.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="not one of its candidates"):
        tuned_table(path)
    unordered = {"decoupled_lookback": {"float32": [
        {"up_to_log2": 24, "block": 256, "params": {"items": 16}},
        {"up_to_log2": 20, "block": 128, "params": {"items": 8}}]}}
    path.write_text(json.dumps(unordered))
    with pytest.raises(ValueError, match="increasing size"):
        tuned_table(path)


def test_choose_keeps_the_fastest_per_size_and_merges_runs(tmp_path):
    m = len(LOOKBACK.candidates)
    fast = {16: 3, 18: 3, 20: 7, 22: 3}  # candidate index fastest at each 2^k
    times = {k: [1.0 if i == j else 2.0 + i / m for i in range(m)] for k, j in fast.items()}
    table = choose(_sweep(times))[LOOKBACK.name]["float32"]
    want = [(18, 3), (20, 7), (22, 3)]
    assert [(r["up_to_log2"], (r["block"], r["params"])) for r in table] == [
        (k, _allowed(LOOKBACK)[j]) for k, j in want]
    path = tmp_path / "tuned.json"
    write_table({LOOKBACK.name: {"float32": table}}, "test", path)
    tuned_table.cache_clear()
    try:
        loaded = tuned_table(path)[LOOKBACK.name]["float32"]
        assert loaded == table
    finally:
        tuned_table.cache_clear()


def test_choose_refuses_a_timed_launch_that_is_not_a_candidate():
    sweep = _sweep({20: [1.0] * len(LOOKBACK.candidates)})
    sweep["results"][0]["configs"].append({"block": 1024, "params": {"items": 1}, "ms": 0.1})
    with pytest.raises(ValueError, match="not one of its candidates"):
        choose(sweep)


def test_tune_main_writes_the_table_and_says_why_it_cannot(tmp_path, capsys):
    src, dst = tmp_path / "tune.json", tmp_path / "tuned.json"
    src.write_text(json.dumps(_sweep({16: list(range(len(LOOKBACK.candidates)))})))
    assert main(["--from", str(src), "--to", str(dst)]) == 0
    assert json.loads(dst.read_text())[LOOKBACK.name]["float32"][0]["block"] == \
        LOOKBACK.candidates[0][0]
    assert main(["--from", str(tmp_path / "missing.json"), "--to", str(dst)]) == 2
    assert "cannot read a tuning run" in capsys.readouterr().err


def test_verify_compares_the_kernel_with_its_model_at_every_candidate(monkeypatch):
    """At every candidate's block and template parameters, each once: candidates that differ
    in runtime parameters alone (the L2 prefetch) compile to one module, and at verify's
    sizes the prefetch never fires."""
    seen = []

    def record(var, x, block, params, model_out, previous, strict=False):
        if params is not None:
            assert strict, "a candidate launch is compared bit for bit"
            seen.append((block, tuple(sorted(params.items())), x.shape[0], x.dtype.name))
        return previous

    monkeypatch.setattr(verify, "_kernel_check", record)
    verify.verify_variant(LOOKBACK, gpu=True)
    shapes = {(b, tuple(sorted(LOOKBACK.template_params(p).items())))
              for b, p in LOOKBACK.candidates}
    assert {(b, p) for b, p, _, _ in seen} == shapes
    assert len(seen) == len(set(seen)), "a launch shape compared twice"
    assert len(shapes) < len(LOOKBACK.candidates)


def test_the_bench_row_gives_each_implementation_as_a_fraction_of_memcpy():
    res = {"dtype": "float32", "log2_n": 20, "memcpy_ms": 1.0, "torch_ms": 2.0, "cub_ms": None,
           "configs": [{"block": 128, "params": {"items": 16}, "ms": 0.5}]}
    row = bench.speed_row(res)
    assert row["config"] == "b128 items=16"
    assert row["ours x memcpy"] == 2.0 and row["torch x memcpy"] == 0.5
    assert row["CUB x memcpy"] is None and row["CUB GB/s"] is None
    assert row["memcpy GB/s"] == pytest.approx(2 * 2**20 * 4 / 1e6)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("config", [(b, p) for b, p in LOOKBACK.candidates
                                    if p["items"] == LOOKBACK.resolve_params(None)["items"]
                                    and p["prefetch_kib"] == 0],
                         ids=str)
def test_one_launch_run_again_on_new_data_never_reads_the_last_runs_tiles(dtype, config):
    """The status array is zeroed once per launch plan: a later run that took an earlier
    run's tile prefixes for its own would add the old data's sums (exact integers here).
    At the default items (the module the suite compiles anyway), every candidate block,
    4- and 8-byte elements: both packed status words."""
    import cupy as cp

    from scancheck.kernels.launch import plan

    block, params = config
    n = block * params["items"] * 37 + 5
    x = cp.asarray(np.random.default_rng(0).integers(-50, 50, n).astype(dtype))
    run = plan(x, LOOKBACK, "add", block, params)
    for seed in range(1, 5):
        new = cp.asarray(np.random.default_rng(seed).integers(-50, 50, n).astype(dtype))
        cp.copyto(x, new)
        got = run().get()
        np.testing.assert_array_equal(got, np.cumsum(new.get(), dtype=dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["int32", "int64", "float64"])
def test_a_launch_that_prefetches_sums_as_one_that_does_not(dtype):
    """Past the prefetch distance every tile asks L2 for a later one; a hint, so the sums
    of integers (exact in each dtype) stay exact, run after run."""
    import cupy as cp

    from scancheck.kernels.launch import plan
    from scancheck.kernels.registry import prefetch_tiles

    block, params = 256, {"items": 16, "prefetch_kib": 6144}
    n = 2**22 + 5
    x = cp.asarray(np.random.default_rng(0).integers(-50, 50, n).astype(dtype))
    run = plan(x, LOOKBACK, "add", block, params)
    ahead = prefetch_tiles(run)
    assert ahead > 0 and (ahead + 2) * block * params["items"] < n, "the prefetch never fires"
    assert prefetch_tiles(plan(x, LOOKBACK, "add", block, {"items": 16})) == 0
    for seed in range(1, 3):
        new = np.random.default_rng(seed).integers(-50, 50, n).astype(dtype)
        cp.copyto(x, cp.asarray(new))
        np.testing.assert_array_equal(run().get(), np.cumsum(new, dtype=dtype))


def test_the_suite_warms_every_module_a_candidate_needs():
    from scancheck.kernels.launch import warm_jobs

    warmed = {(name, tuple(sorted(VARIANTS[name].template_params(p).items())))
              for name, p in warm_jobs()}
    for name, var in VARIANTS.items():
        assert (name, tuple(sorted(var.template_params(None).items()))) in warmed
        for _, params in var.candidates:
            assert (name, tuple(sorted(var.template_params(params).items()))) in warmed
    assert len(warmed) == len(warm_jobs()), "a module warmed twice"


def test_verify_says_differs_for_one_ulp_off_at_a_candidate_launch(monkeypatch):
    """Up to three tiles the look-back has one fold order, so a candidate launch is held to
    bit-for-bit equality; the default launch's many-tile sizes keep 'within bound'."""
    import scancheck.kernels.launch as launch

    def one_ulp_off(x, var, op, block, params=None):
        out = var.build_model(x.shape[0], block, params).run(x, "add")
        out[-1] = np.nextafter(out[-1], np.float32(np.inf))

        class Host:
            def get(self):
                return out
        return Host()

    monkeypatch.setattr(launch, "scan", one_ulp_off)
    x = np.arange(1, 2 * 64 * 4 + 4, dtype=np.float32) * np.float32(1.001)
    model = LOOKBACK.build_model(x.shape[0], 64, {"items": 4}).run(x, "add")
    strict = verify._kernel_check(LOOKBACK, x, 64, {"items": 4}, model, "equal to model", True)
    assert strict.startswith("DIFFERS at n=") and "items" in strict
    loose = verify._kernel_check(LOOKBACK, x, 64, {"items": 4}, model, "equal to model", False)
    assert loose == "within bound"
