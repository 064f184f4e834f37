"""The built-in segmented and chunked targets of libraries: dask's chunks and JAX's device
shards carry exactly across their seams (dask's sequential carry not across a zero-size
chunk: a finding); pandas' groupby cumsum has a finding."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from scancheck.adapters import builtin_targets, known_for
from scancheck.adapters.frames import WITH_EMPTY, irregular
from scancheck.adapters.jax_scans import JAX_DEVICES
from scancheck.engine.cases import Budget
from scancheck.engine.conformance import check_property
from scancheck.isolation.parent import check_isolated

TARGETS = builtin_targets()
DASK = [n for n in TARGETS if n.startswith("dask.")]
FINDING = "pandas groupby().cumsum()"
SHARDED = f"jax.numpy.cumsum (sharded over {JAX_DEVICES} CPU devices)"


@pytest.mark.parametrize("name", DASK)
def test_dask_cumsum_carries_exactly_across_its_chunks(name):
    """Every chunking conforms but where a known bug of the installed dask shows: there the
    failure is that bug's (dask-cumsum-empty-chunk), and a fix makes this test fail."""
    if importlib.util.find_spec("dask") is None:
        pytest.skip("dask is not installed")
    bugs = [b for b in known_for(name) if name in b.targets and b.affects(b.installed())]
    for prop in ("integers exact", "floats within bound"):
        result = check_property(TARGETS[name], prop, Budget(1, max_n=4096))
        if bugs:
            assert any(b.matches(name, result) for b in bugs), (prop, result.diagnosis)
        else:
            assert result.status == "pass", (prop, result.diagnosis, result.smallest_case)


def test_the_chunking_with_empty_chunks_has_them_where_a_scan_crosses_them():
    """A zero-size chunk first, and others between non-empty ones: a carry crosses each."""
    assert irregular(1, WITH_EMPTY) == (0, 1)
    cut = irregular(200, WITH_EMPTY)
    assert sum(cut) == 200 and cut.count(0) >= 3 and cut[-1] > 0
    assert 0 not in irregular(200)


def test_a_jax_scan_sharded_over_virtual_cpu_devices_carries_exactly():
    """In a child process of its own: the virtual devices exist only if XLA_FLAGS asks for
    them before JAX starts.  Compiled anew for every n, so checked to 256 elements here."""
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed")
    rep = check_isolated(f"builtin:{SHARDED}", properties=("integers exact",),
                         budget=Budget(1, max_n=256), workers=1)
    (result,) = rep.results
    assert result.status == "pass", (result.diagnosis, result.smallest_case)


@pytest.mark.gpu
def test_the_sharded_jax_scan_leaves_the_gpu_to_the_checks_beside_it():
    """Asking JAX for CPU devices starts every backend, and a GPU's takes 75% of its memory:
    in a process of its own, the target runs with JAX on the CPU alone."""
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed")
    code = ("import numpy as np\n"
            "from scancheck.adapters.jax_scans import jax_sharded_cumsum\n"
            "out = jax_sharded_cumsum()(np.arange(9, dtype=np.int32))\n"
            "import jax\n"
            "print(jax.default_backend(), out.tolist())\n")
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split(" ", 1) == ["cpu", f"{np.cumsum(np.arange(9)).tolist()}\n"]


def test_pandas_groupby_cumsum_makes_nan_of_an_infinity():
    target = TARGETS[FINDING]
    if target.unavailable:
        pytest.skip(f"{FINDING}: {target.unavailable}")
    result = check_property(target, "segments", Budget(2, max_n=2**14))
    assert result.status == "fail" and result.cause == "SPECIALS", result.diagnosis
    case = result.smallest_case
    assert np.isnan(case["got"]) and np.isinf(case["expected"]) and len(case["x"]) <= 3
