"""Launch tables per device kind: data the registry reads, chosen from a tuning run's
timings, found for the current device (its own file, the package's, the cache, a tuning on
first use bounded in time), never naming a launch that ``verify`` does not compare with its
model, and refused with the file and the field where malformed.  The GPU tests run the
look-back's launches (skipped without one, saying so)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scancheck.faces.jobs import bench, verify
from scancheck.kernels import tune
from scancheck.kernels.registry import VARIANTS
from scancheck.kernels.tune import (
    TUNED_DIR,
    DeviceKind,
    TableError,
    autotune,
    choose,
    device_table,
    first_use_candidates,
    main,
    read_table,
    write_table,
)

LOOKBACK = VARIANTS["decoupled_lookback"]
H100 = DeviceKind("NVIDIA H100 80GB HBM3", "9.0")
NEW = DeviceKind("NVIDIA Test GPU", "12.1")


def _allowed(var):
    return [(b, var.resolve_params(p)) for b, p in var.candidates]


def _sweep(times: dict[int, list[float]], dtype: str = "float32") -> dict:
    """A tuning run whose candidate i takes times[k][i] ms at 2^k."""
    return {"device": NEW.name, "compute_capability": NEW.compute_capability, "date": "today",
            "results": [
                {"variant": LOOKBACK.name, "dtype": dtype, "log2_n": k, "memcpy_ms": 1.0,
                 "torch_ms": 2.0, "cub_ms": 3.0,
                 "configs": [{"block": b, "params": p, "ms": ms}
                             for (b, p), ms in zip(LOOKBACK.candidates, row)]}
                for k, row in times.items()]}


class FakeDevice:
    """A launcher and a clock: each launch timed takes ``cost`` seconds of the clock and
    ``ms[(block, items)]`` (default 1.0) milliseconds; the calls are counted."""

    def __init__(self, cost: float = 0.0, ms: dict | None = None):
        self.now, self.cost, self.ms, self.calls = 100.0, cost, ms or {}, []

    def clock(self) -> float:
        return self.now

    def measure(self, dtype, log2_n, block, params):
        self.calls.append((dtype, log2_n, block, params["items"]))
        self.now += self.cost
        return self.ms.get((block, params["items"]), 1.0)


def _table_at(folder: Path, kind: DeviceKind, block: int = 128, items: int = 32) -> Path:
    rows = {dt: [{"up_to_log2": 30, "block": block, "params": {"items": items}}]
            for dt in tune.TUNED_DTYPES}
    return write_table(folder, kind, {LOOKBACK.name: rows}, "test")


def test_every_shipped_table_names_only_candidates_for_every_dtype_and_size():
    files = sorted(TUNED_DIR.glob("*.json"))
    assert TUNED_DIR / f"{H100.key}.json" in files
    for path in files:
        table, data = read_table(path)
        assert path.stem == DeviceKind(data["device"], data["compute_capability"]).key
        for dtype in ("float32", "float64", "int32", "int64"):
            assert table[LOOKBACK.name][dtype], (path, dtype)
            for k in range(0, 35):
                block, params = LOOKBACK.tuned(dtype, 2**k, table)
                assert (block, params) in _allowed(LOOKBACK), (path, dtype, k, block, params)
                LOOKBACK.check(2**k, block, dtype, "add", params, smem_limit=227 * 1024)


def test_the_h100_keeps_its_table_and_a_new_device_kind_has_none(tmp_path):
    found = device_table(H100, tune_now=False, versions=(1, 1), environ={}, cache=tmp_path)
    assert found.source == "built-in for NVIDIA H100 80GB HBM3 (sm_90)"
    assert found.launch(LOOKBACK.name, "float32", 2**28) == (
        256, LOOKBACK.resolve_params({"items": 32, "hoist": 0, "prefetch_kib": 0}))
    other = device_table(NEW, tune_now=False, versions=(1, 1), environ={}, cache=tmp_path)
    assert other.rows == {} and "no table for NVIDIA Test GPU (sm_121)" in other.source
    assert other.launch(LOOKBACK.name, "float32", 2**28) == (256, LOOKBACK.resolve_params(None))


def test_a_table_folder_of_ones_own_comes_before_the_packages(tmp_path):
    own = _table_at(tmp_path / "own", H100, 512, 4)
    found = device_table(H100, tune_now=False, versions=(1, 1), environ={tune.TABLES_ENV:
                                                                         str(own.parent)})
    assert found.source == f"from {own}" and found.launch(LOOKBACK, "int64", 2**20)[0] == 512
    elsewhere = device_table(H100, tune_now=False, versions=(1, 1),
                             environ={tune.TABLES_ENV: str(tmp_path / "empty")})
    assert elsewhere.source.startswith("built-in")


def test_a_device_without_a_table_is_tuned_once_then_read_from_the_cache(tmp_path, capsys):
    fastest = first_use_candidates(LOOKBACK)[3]
    fake = FakeDevice(ms={(fastest[0], fastest[1]["items"]): 0.5})
    got = device_table(NEW, measure=fake.measure, versions=(555, 130), environ={},
                       cache=tmp_path, clock=fake.clock)
    err = capsys.readouterr().err
    assert "tuning the look-back on it now, for at most 20 s" in err and str(NEW) in err
    assert got.source.startswith(f"tuned now for {NEW}") and fake.calls
    block, params = got.launch(LOOKBACK.name, "float64", 2**24)
    assert (block, params["items"]) == (fastest[0], fastest[1]["items"])
    [kept] = tmp_path.iterdir()
    assert kept.name.startswith(NEW.key) and got.path == kept
    assert json.loads(kept.read_text())["fingerprint"]["driver"] == 555
    calls = len(fake.calls)
    again = device_table(NEW, measure=fake.measure, versions=(555, 130), environ={},
                         cache=tmp_path, clock=fake.clock)
    assert again.source == f"cached from {kept}" and again.rows == got.rows
    assert len(fake.calls) == calls, "a cached table was tuned again"


@pytest.mark.parametrize("change", ["driver", "source"])
def test_a_cached_table_of_another_driver_or_kernel_source_is_stale(tmp_path, monkeypatch,
                                                                    change):
    fake = FakeDevice()
    device_table(NEW, measure=fake.measure, versions=(555, 130), environ={}, cache=tmp_path,
                 clock=fake.clock)
    calls = len(fake.calls)
    versions = (556, 130) if change == "driver" else (555, 130)
    if change == "source":
        monkeypatch.setattr(tune, "source_hash", lambda: "another kernel")
    stale = device_table(NEW, measure=fake.measure, versions=versions, environ={},
                         cache=tmp_path, clock=fake.clock)
    assert stale.source.startswith("tuned now") and len(fake.calls) == 2 * calls
    assert len(list(tmp_path.iterdir())) == 2


def test_a_cached_table_under_another_fingerprint_is_not_taken_for_this_one(tmp_path):
    """The cache file's name hashes the fingerprint; the one inside must match it too."""
    fp = tune.fingerprint(NEW, 555, 130, "src")
    path = tune.cache_path(fp, tmp_path)
    write_table(path, NEW, {}, "test", {**fp, "driver": 1})
    assert tune.read_cached(fp, tmp_path) is None
    write_table(path, NEW, {}, "test", fp)
    assert tune.read_cached(fp, tmp_path) == ({}, path)


def test_an_unusable_cached_table_is_tuned_again_and_said(tmp_path, capsys):
    fake = FakeDevice()
    device_table(NEW, measure=fake.measure, versions=(1, 2), environ={}, cache=tmp_path,
                 clock=fake.clock)
    [kept] = tmp_path.iterdir()
    kept.write_text("{ not json")
    again = device_table(NEW, measure=fake.measure, versions=(1, 2), environ={},
                         cache=tmp_path, clock=fake.clock)
    assert again.source.startswith("tuned now")
    assert f"the cached launch table is unusable, tuning again: {kept}: is not JSON" in \
        capsys.readouterr().err


def test_autotuning_can_be_turned_off_by_the_environment(tmp_path):
    fake = FakeDevice()
    off = device_table(NEW, measure=fake.measure, versions=(1, 2),
                       environ={tune.AUTOTUNE_ENV: "0"}, cache=tmp_path, clock=fake.clock)
    assert off.rows == {} and "SCANCHECK_AUTOTUNE=0" in off.source and not fake.calls
    assert not list(tmp_path.iterdir())
    assert tune.autotune_enabled({}) and tune.autotune_enabled({tune.AUTOTUNE_ENV: "1"})


def test_a_first_use_tuning_stops_at_its_time_bound_with_its_best_candidates_everywhere():
    """Each launch costs 1 s of a fake clock: a 20 s bound times 20 of 12 x 16 launches,
    the first candidate at every (dtype, size), and says it was cut."""
    fake = FakeDevice(cost=1.0)
    cands = first_use_candidates(LOOKBACK)
    result = autotune(fake.measure, clock=fake.clock, budget_s=20.0, candidates=cands)
    assert len(fake.calls) == result.timed == 20
    assert result.planned == len(cands) * 16 and "the time bound reached" in result.summary()
    assert result.seconds == 20.0
    first = {(dt, k) for dt, k, b, i in fake.calls[:16]}
    assert len(first) == 16 and {(b, i) for _, _, b, i in fake.calls[:16]} == {
        (cands[0][0], cands[0][1]["items"])}
    for dtype in tune.TUNED_DTYPES:
        assert [r["up_to_log2"] for r in result.table[LOOKBACK.name][dtype]] in ([28], [24, 28],
                                                                                 [20, 28])
    unbounded = autotune(FakeDevice(cost=1.0).measure, clock=fake.clock, budget_s=1e9,
                         candidates=cands)
    assert unbounded.timed == unbounded.planned and "bound" not in unbounded.summary()


def test_first_use_candidates_are_the_shipped_tables_choices_most_chosen_first():
    h100 = read_table(TUNED_DIR / f"{H100.key}.json")[0]
    chosen = [(r["block"], r["params"]) for rows in h100[LOOKBACK.name].values() for r in rows]
    cands = first_use_candidates(LOOKBACK, [h100], limit=40)
    counts = [chosen.count(c) for c in cands]
    assert counts[:-1] == sorted(counts[:-1], reverse=True) and counts[0] > 1
    assert all(c in cands for c in chosen)
    assert (256, LOOKBACK.resolve_params(None)) in cands
    assert all(c in _allowed(LOOKBACK) for c in cands)
    assert len(first_use_candidates(LOOKBACK, [h100], limit=3)) == 3


def _good(kind: DeviceKind = H100) -> dict:
    return {"device": kind.name, "compute_capability": kind.compute_capability,
            LOOKBACK.name: {"float32": [{"up_to_log2": 20, "block": 256, "params": {"items": 8}},
                                        {"up_to_log2": 30, "block": 128,
                                         "params": {"items": 32}}]}}


def _bad(change) -> dict:
    data = _good()
    change(data)
    return data


MALFORMED = {
    "not JSON": ("{ nope", "is not JSON"),
    "a list": ([], "the top level: must be a JSON object"),
    "no device": (_bad(lambda d: d.pop("device")), "field 'device': must be a string"),
    "a bad capability": (_bad(lambda d: d.update(compute_capability="sm90")),
                         "field 'compute_capability': 'sm90' is not of the form"),
    "an unknown variant": (_bad(lambda d: d.update(lookback={})), "field 'lookback': is not a "
                                                                 "variant"),
    "an unknown dtype": (_bad(lambda d: d[LOOKBACK.name].update(float8=[])),
                         "field 'decoupled_lookback.float8': 'float8' is not a dtype"),
    "no rows": (_bad(lambda d: d[LOOKBACK.name].update(float64=[])),
                "field 'decoupled_lookback.float64': must be a non-empty list"),
    "a row missing a field": (_bad(lambda d: d[LOOKBACK.name]["float32"][0].pop("block")),
                              "field 'decoupled_lookback.float32[0]': a row has exactly"),
    "a block not an integer": (_bad(lambda d: d[LOOKBACK.name]["float32"][1].update(
        block="128")), "field 'decoupled_lookback.float32[1].block': must be a non-negative"),
    "an unknown parameter": (_bad(lambda d: d[LOOKBACK.name]["float32"][0]["params"].update(
        warps=4)), "field 'decoupled_lookback.float32[0].params': decoupled_lookback has no "
                   "parameter 'warps'"),
    "a value not allowed": (_bad(lambda d: d[LOOKBACK.name]["float32"][0]["params"].update(
        items=3)), "field 'decoupled_lookback.float32[0].params': items=3 is not allowed"),
    "not a candidate": (_bad(lambda d: d[LOOKBACK.name]["float32"][0].update(block=1024)),
                        "field 'decoupled_lookback.float32[0]': block=1024 {'items': 8} is not "
                        "one of the candidates"),
    "rows out of order": (_bad(lambda d: d[LOOKBACK.name]["float32"].reverse()),
                          "field 'decoupled_lookback.float32': rows are not by increasing size"),
}


@pytest.mark.parametrize("defect", list(MALFORMED))
def test_a_malformed_table_is_refused_naming_the_file_and_the_field(tmp_path, defect):
    content, message = MALFORMED[defect]
    path = tmp_path / f"{H100.key}.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(TableError) as info:
        device_table(H100, tune_now=False, versions=(1, 1), environ={}, builtin=tmp_path)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value), info.value
    assert isinstance(info.value, ValueError)


def test_a_well_formed_table_of_the_same_shape_is_taken(tmp_path):
    """The negative control of the refusals: the table they break, whole, is read."""
    path = tmp_path / f"{H100.key}.json"
    path.write_text(json.dumps(_good()))
    found = device_table(H100, tune_now=False, versions=(1, 1), environ={}, builtin=tmp_path)
    assert found.launch(LOOKBACK, "float32", 2**24) == (128, LOOKBACK.resolve_params(
        {"items": 32}))


def test_a_table_of_another_device_kind_is_refused(tmp_path):
    path = tmp_path / f"{H100.key}.json"
    path.write_text(json.dumps(_good(NEW)))
    with pytest.raises(TableError, match="fields 'device', 'compute_capability': the table is "
                                         "for NVIDIA Test GPU"):
        device_table(H100, tune_now=False, versions=(1, 1), environ={}, builtin=tmp_path)


def test_choose_keeps_the_fastest_per_size_and_merges_runs(tmp_path):
    m = len(LOOKBACK.candidates)
    fast = {16: 3, 18: 3, 20: 7, 22: 3}  # candidate index fastest at each 2^k
    times = {k: [1.0 if i == j else 2.0 + i / m for i in range(m)] for k, j in fast.items()}
    table = choose(_sweep(times))[LOOKBACK.name]["float32"]
    want = [(18, 3), (20, 7), (22, 3)]
    assert [(r["up_to_log2"], (r["block"], r["params"])) for r in table] == [
        (k, _allowed(LOOKBACK)[j]) for k, j in want]
    path = write_table(tmp_path, NEW, {LOOKBACK.name: {"float32": table}}, "test")
    assert path == tmp_path / f"{NEW.key}.json"
    assert read_table(path, NEW)[0][LOOKBACK.name]["float32"] == table


def test_choose_refuses_a_timed_launch_that_is_not_a_candidate():
    sweep = _sweep({20: [1.0] * len(LOOKBACK.candidates)})
    sweep["results"][0]["configs"].append({"block": 1024, "params": {"items": 1}, "ms": 0.1})
    with pytest.raises(ValueError, match="not one of its candidates"):
        choose(sweep)


def test_tune_main_writes_the_devices_table_and_says_why_it_cannot(tmp_path, capsys):
    src = tmp_path / "tune.json"
    src.write_text(json.dumps(_sweep({16: list(range(len(LOOKBACK.candidates)))})))
    assert main(["--from", str(src), "--to", str(tmp_path)]) == 0
    written = json.loads((tmp_path / f"{NEW.key}.json").read_text())
    assert written[LOOKBACK.name]["float32"][0]["block"] == LOOKBACK.candidates[0][0]
    assert written["device"] == NEW.name and written["compute_capability"] == "12.1"
    assert main(["--from", str(tmp_path / "missing.json"), "--to", str(tmp_path)]) == 2
    assert "cannot read a tuning run" in capsys.readouterr().err


def test_a_device_kind_is_keyed_by_name_and_capability():
    assert H100.key == "NVIDIA_H100_80GB_HBM3-sm_90" and str(H100) == \
        "NVIDIA H100 80GB HBM3 (sm_90)"
    assert DeviceKind("NVIDIA H200", "9.0").key != DeviceKind("NVIDIA H200", "10.0").key


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
           "configs": [{"block": 128, "params": {"items": 16, "prefetch_kib": 6144}, "ms": 0.5}]}
    row = bench.speed_row(res)
    assert row["launch"] == "128x16+pf" and row["ours ms"] == 0.5
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
