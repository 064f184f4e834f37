"""Test-session set-up: Hypothesis profiles, the ``gpu`` marker, one GPU per xdist worker.

Profiles: ``ci`` (quick, the default), ``gpu`` (no deadline, more examples) and
``thorough`` (nightly).  Pick one with ``--hypothesis-profile NAME`` or the
``SCANCHECK_HYPOTHESIS_PROFILE`` environment variable.  Tests marked ``gpu`` skip,
saying why, where cupy or a CUDA device is missing.  With several GPUs visible,
xdist worker ``gwK`` uses device ``K mod count``; all workers share one CuPy kernel
cache, so each kernel is compiled once per machine, not once per worker.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

os.environ.setdefault("CUPY_CACHE_DIR", str(Path(tempfile.gettempdir()) / "scancheck-cupy-cache"))

_DB = DirectoryBasedExampleDatabase(
    os.environ.get("SCANCHECK_HYPOTHESIS_DB", str(Path(__file__).parent / ".hypothesis" / "examples"))
)
_COMMON = dict(database=_DB, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=25, deadline=None, print_blob=True, **_COMMON)
settings.register_profile("gpu", max_examples=60, deadline=None, print_blob=True, **_COMMON)
settings.register_profile("thorough", max_examples=500, deadline=None, print_blob=True, **_COMMON)
settings.load_profile(os.environ.get("SCANCHECK_HYPOTHESIS_PROFILE", "ci"))


def _gpu_state() -> tuple[int, str]:
    """(number of CUDA devices, reason when there are none)."""
    try:
        import cupy
    except ImportError as exc:
        return 0, f"cupy is not installed ({exc}); install scancheck[cuda12] or [cuda13]"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver, no device: any CUDA error means "no GPU here"
        return 0, f"no usable CUDA device ({type(exc).__name__}: {exc})"
    return count, "" if count else "no CUDA device is visible"


def _worker_index(config: pytest.Config) -> int:
    worker = getattr(config, "workerinput", {}).get("workerid", "gw0")
    return int(worker[2:]) if worker.startswith("gw") else 0


def pytest_configure(config: pytest.Config) -> None:
    count, reason = _gpu_state() if _wants_gpu(config) else (0, "gpu tests not selected")
    config._scancheck_gpus = (count, reason)  # type: ignore[attr-defined]
    if count:
        import cupy

        cupy.cuda.Device(_worker_index(config) % count).use()


def _wants_gpu(config: pytest.Config) -> bool:
    markexpr = config.getoption("markexpr", "") or ""
    return "not gpu" not in markexpr


def pytest_report_header(config: pytest.Config) -> list[str]:
    count, reason = config._scancheck_gpus  # type: ignore[attr-defined]
    profile = settings._current_profile  # the name Hypothesis loaded
    if not count:
        return [f"scancheck: no GPU ({reason}); gpu tests will skip", f"hypothesis profile: {profile}"]
    import cupy

    names = [cupy.cuda.runtime.getDeviceProperties(i)["name"].decode() for i in range(count)]
    return [f"scancheck: {count} GPU(s): {', '.join(names)}", f"hypothesis profile: {profile}"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    count, reason = config._scancheck_gpus  # type: ignore[attr-defined]
    if count:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def gpu_device() -> str:
    """Name of the CUDA device this worker uses (the test is marked gpu)."""
    import cupy

    dev = cupy.cuda.Device()
    return f"{cupy.cuda.runtime.getDeviceProperties(dev.id)['name'].decode()} (device {dev.id})"
