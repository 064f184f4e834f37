"""The bench's walk over (dtype, size): what fits in device memory is measured, the rest is
named as skipped (the timings themselves need a GPU: the GPU suite's bench part)."""

from __future__ import annotations

from scancheck import bench


def test_only_the_sizes_that_fit_are_walked_and_the_others_are_named(monkeypatch):
    monkeypatch.setattr(bench, "_fits", lambda n, dtype: n * (8 if dtype == "float64" else 4)
                        <= 2**22)
    skipped: list[str] = []
    walked = list(bench._sizes_that_fit("t", ("float32", "float64"), (18, 20), skipped))
    assert walked == [("float32", 18), ("float32", 20), ("float64", 18)]
    assert skipped == ["float64 n=2^20"]
