"""The built-in pandas, polars, pyarrow and numba scans conform under the contracts they
declare (where their library is installed: not in CI), and an undeclared one is named."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scancheck.adapters import builtin_targets, frames, numba_scans
from scancheck.engine.cases import Budget
from scancheck.engine.conformance import check

#: The unsegmented scans of one chunk: pandas, polars, pyarrow and numba.
FRAMES = [r.name for r in (*frames.ROWS, *numba_scans.ROWS)
          if r.spec.segments is None and not r.name.startswith("dask")]
TARGETS = builtin_targets()


def _available(name):
    target = TARGETS[name]
    if target.unavailable:
        pytest.skip(f"{name}: {target.unavailable}")
    return target


@pytest.mark.parametrize("name", FRAMES)
def test_each_library_scan_conforms_under_its_declared_contract(name):
    rep = check(_available(name), budget=Budget(0.1, max_n=2**10))
    assert rep.passed, rep.rows()


@pytest.mark.parametrize("name, field, plain, words", [
    ("pandas Series.cumsum()", "nans", "propagate", "declare --nans skip"),
    ("pyarrow.compute.cumulative_sum_checked", "overflow", "wrap", "declare --overflow raise"),
    ("numba njit(np.cumsum)", "promote", (), "declare --promote int32:int64"),
])
def test_each_contract_left_undeclared_is_named_with_its_flag(name, field, plain, words):
    target = _available(name)
    target = replace(target, spec=replace(target.spec, **{field: plain}))
    rep = check(target, budget=Budget(0.1, max_n=2**10))
    assert not rep.passed and words in rep.diagnosis, rep.diagnosis
