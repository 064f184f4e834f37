"""Seed 004's float precision "bug": reproduced on the models (CPU) and the kernels (GPU)."""

from __future__ import annotations

import pytest

from scancheck.faces.jobs.precision import conclusion, practical_data, precision_table, sweep


def _by(rows, scan, dtype):
    return next(r for r in rows if r.scan == scan and r.dtype == dtype)


def _check_effect(rows):
    seq = _by(rows, "sequential", "float32")
    for name in ("hierarchical", "decoupled_lookback"):
        tree = _by(rows, name, "float32")
        # The sequential reference, not the tree scan, carries the error.
        assert seq.rms > 30 * tree.rms, (seq.rms, tree.rms)
        assert tree.rms_vs_ref > 30 * tree.rms
        assert _by(rows, name, "float64").max_err == 0
    assert _by(rows, "sequential", "float64").max_err == 0
    assert all(r.verdict != "beyond bound" for r in rows)


def test_the_effect_on_the_models_at_a_size_ci_affords():
    rows, text = precision_table(practical_data(2**18), gpu=False)
    _check_effect(rows)
    assert "sequential reference's rounding" in text and "not a bug" in text


@pytest.mark.gpu
@pytest.mark.slow
def test_the_effect_on_the_kernels_at_one_million():
    rows, text = precision_table(practical_data(1_000_000), gpu=True)
    _check_effect(rows)
    assert any(r.where == "GPU" for r in rows)
    assert 5e3 < _by(rows, "sequential", "float32").rms < 5e4


def test_conclusion_reports_a_scan_beyond_its_bound():
    rows, _ = precision_table(practical_data(4096), gpu=False)
    rows[2].verdict = "beyond bound"
    assert "logic errors" in conclusion(rows)


def test_the_conclusion_compares_the_rmss_it_measured_both_ways():
    """Exact scans are said to be exact, and tree scans rounding ten times more than the
    sequential one are not called of similar size."""
    from dataclasses import replace

    rows, _ = precision_table(practical_data(10), gpu=False)
    assert "Every float32 scan is exact at this n" in conclusion(rows)
    seq = next(r for r in rows if r.scan == "sequential" and r.dtype == "float32")
    rounded = [replace(r, rms=(1.0 if r is seq else 20.0) if r.dtype == "float32" else r.rms)
               for r in rows]
    assert "The tree scans round more than the sequential one" in conclusion(rounded)


def test_float64_exactness_is_claimed_of_the_finite_prefixes_alone_on_data_with_specials():
    _, plain = precision_table(practical_data(4096), gpu=False)
    assert "(every prefix fits in 53 bits)" in plain
    _, specials = precision_table(practical_data(4096, "specials"), gpu=False)
    assert "every prefix fits" not in specials
    assert "(every finite prefix fits in 53 bits)" in specials


def test_sweep_errors_stay_within_bounds_and_grow_slower_for_trees():
    swept = sweep([14, 17], gpu=False, max_tree_log2=17, max_model_log2=17)
    points = swept.points
    assert swept.stopped is None
    assert {p.algorithm for p in points} >= {"sequential", "kogge_stone", "blelloch", "hierarchical"}
    assert all(p.max_err <= p.bound for p in points)
    big = {p.algorithm: p for p in points if p.n == 2**17}
    assert big["sequential"].max_err > 10 * big["kogge_stone"].max_err


@pytest.mark.gpu
@pytest.mark.slow
def test_the_sweep_on_the_device_keeps_every_error_within_its_bound():
    """The exact answers, magnitude sums and errors computed on the device (the GPU scans'
    outputs never leave it) at sizes past the models'."""
    points = sweep([16, 24], gpu=True, max_tree_log2=16).points
    assert all(p.max_err <= p.bound for p in points), points
    big = {p.algorithm: p for p in points if p.n == 2**24}
    assert set(big) == {"sequential", "hierarchical", "decoupled_lookback"}
    assert 0 < big["decoupled_lookback"].max_err < big["sequential"].max_err


def test_bad_arguments():
    with pytest.raises(ValueError, match="n=0"):
        practical_data(0)
    with pytest.raises(ValueError, match="distribution='normal'"):
        practical_data(10, "normal")


def test_a_size_that_does_not_fit_in_memory_ends_the_sweep_there_and_says_so(monkeypatch):
    """Out of memory at a size (another process may hold the device's), the sweep keeps every
    smaller size whole and says where it stopped and which --max-log2 fits; any other error
    is raised."""
    from scancheck.faces.jobs import precision

    real = precision._sweep_size

    def sweep_size(n, *args):
        if n >= 2**14:
            raise MemoryError("Unable to allocate 8.00 GiB")
        return real(n, *args)

    monkeypatch.setattr(precision, "_sweep_size", sweep_size)
    swept = sweep([10, 12, 14, 16], gpu=False)
    assert {p.n for p in swept.points} == {2**10, 2**12}
    assert swept.stopped.startswith("stopped at n = 2^14: out of host memory (MemoryError)")
    assert "--max-log2 12" in swept.stopped

    def none_fits(n, *args):
        raise MemoryError("Unable to allocate 8.00 GiB")

    monkeypatch.setattr(precision, "_sweep_size", none_fits)
    swept = sweep([10, 12], gpu=False)
    assert swept.points == [] and swept.stopped.endswith("no size of the sweep fits")

    def broken(n, *args):
        raise ValueError("not a memory error")

    monkeypatch.setattr(precision, "_sweep_size", broken)
    with pytest.raises(ValueError, match="not a memory error"):
        sweep([10], gpu=False)
