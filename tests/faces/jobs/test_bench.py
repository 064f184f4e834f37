"""The bench's walk over (dtype, size): what fits in device memory is measured, the rest is
named as skipped (the timings themselves need a GPU: the GPU suite's bench part)."""

from __future__ import annotations

import numpy as np

from scancheck.faces.jobs import bench


def test_only_the_sizes_that_fit_are_walked_and_the_others_are_named(monkeypatch):
    monkeypatch.setattr(bench, "_fits", lambda n, dtype: n * (8 if dtype == "float64" else 4)
                        <= 2**22)
    skipped: list[str] = []
    walked = list(bench._sizes_that_fit("t", ("float32", "float64"), (18, 20), skipped))
    assert walked == [("float32", 18), ("float32", 20), ("float64", 18)]
    assert skipped == ["float64 n=2^20"]


def _scan_rows() -> list[dict]:
    """speed_row of a made-up run: every dtype and size, a long launch label, a missing CUB."""
    rows = []
    for dtype in bench.BENCH_DTYPES:
        for k in (16, 20, 24, 28, 30):
            res = {"dtype": dtype, "log2_n": k, "memcpy_ms": 1.234567, "torch_ms": 2.0 + k,
                   "cub_ms": None if k == 20 else 3.3,
                   "configs": [{"block": 512, "params": {"items": 64, "hoist": 1,
                                                         "prefetch_kib": 6144, "backoff_ns": 200,
                                                         "span": 2},
                                "ms": 1.3}]}
            rows.append(bench.speed_row(res))
    return rows


def _oracle_rows(sizes=(20, 24, 28)) -> list[dict]:
    from scancheck.engine.strategies import DISTRIBUTIONS

    return [{"dtype": dtype, "log2_n": k, "distribution": dist, "oracle_ms": 12.345678,
             "torch_ms": 0.987654, "x torch": 12.49999, "bits equal to the CPU oracle's":
             (k <= 24) or None}
            for dtype in ("float32", "float64") for k in sizes for dist in DISTRIBUTIONS]


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_the_bench_tables_fit_a_terminal_and_the_json_keeps_every_figure():
    scans, oracle = _scan_rows(), _oracle_rows()
    source = "built-in for NVIDIA H100 80GB HBM3 (sm_90)"
    text = bench.scans_text(scans, source) + "\n" + bench.oracle_text(oracle)
    assert _widest(text) <= bench.WIDTH, text
    assert source in text.replace("\n", " ") and "512x64+h+pf+bo+s2" in text
    # The negative control: the rows whole, as one table, are far wider.
    from scancheck.faces.tables import format_table

    assert _widest(format_table(scans)) > bench.WIDTH
    for row in scans:  # what the printed table leaves out, the JSON rows keep
        for impl in ("ours", "torch", "CUB", "memcpy"):
            assert f"{impl} ms" in row and f"{impl} GB/s" in row
        assert row["params"]["backoff_ns"] == 200 and row["torch x memcpy"] is not None
    assert {"oracle_ms", "torch_ms", "x torch"} <= set(oracle[0])


def test_the_oracle_table_has_a_row_per_distribution_and_a_column_per_dtype_and_size():
    from scancheck.engine.strategies import DISTRIBUTIONS

    text = bench.oracle_text(_oracle_rows())
    lines = text.splitlines()
    header = next(ln for ln in lines if ln.startswith("distribution"))
    assert header.split()[1:] == ["f32", "2^20", "f32", "2^24", "f32", "2^28", "f64", "2^20",
                                  "f64", "2^24", "f64", "2^28"]
    for dist in DISTRIBUTIONS:
        assert any(ln.split()[0] == dist for ln in lines), dist
    assert "(torch.cumsum ms)" in text and "12.5" in text
    assert "equal to the CPU oracle's at every distribution checked (sizes 2^20, 2^24)" in text
    wrong = _oracle_rows()
    wrong[3]["bits equal to the CPU oracle's"] = False
    assert "DIFFERENT from the CPU oracle's at float32 cancellation 2^20" in bench.oracle_text(
        wrong)


def test_a_table_too_wide_for_a_terminal_is_split_keeping_its_key_columns():
    rows = _oracle_rows(sizes=(16, 18, 20, 22, 24, 26, 28, 30))
    text = bench.oracle_text(rows)
    assert _widest(text) <= bench.WIDTH
    parts = [ln for ln in text.splitlines() if ln.startswith("distribution")]
    assert len(parts) >= 2, text
    assert "f64 2^30" in text and "f32 2^16" in text
    one = bench.fit_tables([{"k": "a", "x" * 300: 1.0}], ("k",), "t")
    assert _widest(one) <= bench.WIDTH and "…" in one


def test_the_sweep_table_fits_a_terminal():
    from scancheck.kernels.registry import VARIANTS

    cands = VARIANTS[bench.TUNED_VARIANT].candidates
    sweep = {"results": [{"dtype": dt, "log2_n": k, "memcpy_ms": 1.0, "torch_ms": 1.5,
                          "cub_ms": None,
                          "configs": [{"block": b, "params": p, "ms": 1.0 + i / 100 if i < 16
                                       else None} for i, (b, p) in enumerate(cands)]}
                         for dt in bench.BENCH_DTYPES for k in range(16, 31, 2)]}
    rows = bench.sweep_rows(sweep)
    assert rows[0]["timed"] == f"16 of {len(cands)}" and rows[0]["best x memcpy"] == 1.0
    text = bench.fit_tables(rows, ("dtype", "n"), "tuning run")
    assert _widest(text) <= bench.WIDTH and len(text.splitlines()) == 3 + len(rows)


def test_oracle_dists_and_sizes_are_refused_naming_the_argument_and_what_is_allowed():
    """bench --oracle on a CPU: an unknown distribution, a size that is no log2, and one past
    what the CPU table times (the device table's, with no GPU) are usage errors."""
    import re

    import pytest

    from scancheck.engine.strategies import DISTRIBUTIONS

    allowed = ", ".join(("normal", *DISTRIBUTIONS))
    with pytest.raises(ValueError, match=rf"^--oracle-dists foo: unknown; allowed: "
                                         rf"{re.escape(allowed)}$"):
        bench.oracle_request(["foo"], ["10"], gpu=False)
    with pytest.raises(ValueError, match=r"^--oracle-dists given no name"):
        bench.oracle_request([], None, gpu=False)
    for bad in ("x", "0", "-3", "99"):
        with pytest.raises(ValueError, match=rf"^--oracle-sizes {bad}: not a log2 size; allowed"):
            bench.oracle_request(None, [bad], gpu=False)
    past = bench.CPU_ORACLE_MAX_LOG2 + 1
    with pytest.raises(ValueError, match=rf"^--oracle-sizes {past}: past "
                                         rf"{bench.CPU_ORACLE_MAX_LOG2} .*needs a GPU \(none "
                                         rf"here\); allowed here: 1 to "
                                         rf"{bench.CPU_ORACLE_MAX_LOG2}$"):
        bench.oracle_request(None, ["10", str(past)], gpu=False, why="none here")
    # On a GPU the device table times every size; the CPU table those it can.
    assert bench.oracle_request(["wide"], ["10", str(past)], gpu=True) == (
        ("wide",), (10,), (10, past))
    assert bench.oracle_request(None, None, gpu=False) == (None, (bench.CPU_ORACLE_LOG2,), ())


def test_the_cpu_oracle_table_times_the_sizes_and_distributions_asked_and_says_n():
    dists, cpu, device = bench.oracle_request(["normal", "wide"], ["10", "11"], gpu=False)
    assert device == ()
    rows = bench.oracle_throughput(sizes=tuple(2**k for k in cpu), dists=dists, mp_n=200, reps=1)
    timed = {(r["input"], r["n"]) for r in rows[1:]}
    assert timed == {(f"exact_scan, {t} {d}", f"2^{k}") for t in ("float32", "float64")
                     for d in dists for k in cpu}
    assert all(r["elements/s"] > 0 for r in rows) and rows[0]["x mpmath"] == 1.0
    text = bench.throughput_text(rows, "exact oracle throughput on this CPU")
    assert _widest(text) <= bench.WIDTH and "2^11" in text, text


def test_the_oracle_data_of_normal_is_normal_and_of_the_others_the_strategies():
    """The default table's normal(0, 1) rows can be asked for by name, and the strategies'
    distributions are drawn by the strategies' own generator."""
    from scancheck.engine.strategies import generate_data

    x = bench.oracle_data(np.random.default_rng(0), 10_000, "float32", "normal")
    assert x.dtype == np.float32 and abs(float(x.mean())) < 0.05 and 0.95 < x.std() < 1.05
    np.testing.assert_array_equal(
        bench.oracle_data(np.random.default_rng(3), 100, "float64", "wide"),
        generate_data(np.random.default_rng(3), 100, "float64", "wide"))


def test_the_device_oracle_table_fits_a_terminal():
    """Its rows as device_oracle_throughput makes them (a made-up run: the timing needs a GPU)."""
    rows = [{"input": label, "n": f"2^{k}", "oracle ms": 123.456789, "elements/s": 1.23e10,
             "x memcpy time": 2.5, "torch.cumsum ms": 12.3456, "x torch.cumsum time": 10.0001}
            for label, _, _ in bench.DEVICE_ORACLE_CASES for k in (24, 28)]
    text = bench.throughput_text(rows, "exact oracle on an NVIDIA H100 80GB HBM3 (median of 10)")
    assert _widest(text) <= bench.WIDTH, text
    assert all(label in text for label, _, _ in bench.DEVICE_ORACLE_CASES)
