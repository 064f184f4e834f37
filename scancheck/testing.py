"""Assertions for scan results, in the manner of ``numpy.testing`` and ``cupy.testing``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from .core.arrays import same_bits, to_numpy


def assert_same_bits(actual: Any, expected: Any, what: str = "result") -> None:
    """Raise with the first differing positions unless ``actual`` equals ``expected`` bit for bit."""
    eq = same_bits(actual, expected)
    if eq.all():
        return
    a, b = to_numpy(actual), to_numpy(expected)
    bad = np.flatnonzero(~eq)
    k = bad[0]
    raise AssertionError(
        f"{what}: {bad.size} of {eq.size} elements differ; first at index {k}: "
        f"got {a[k]!r}, expected {b[k]!r} (indices {bad[:8].tolist()})"
    )


def crashing_scan(x: np.ndarray) -> np.ndarray:
    """A target that kills its process (as an illegal address kills a CUDA context)."""
    import os

    if x.shape[0] > 3:
        os.abort()
    return np.cumsum(x, dtype=x.dtype)


def crashing_on_empty_scan(x: np.ndarray) -> np.ndarray:
    """A target that kills its process on an empty input, and is right on any other."""
    import os

    if x.shape[0] == 0:
        os.abort()
    return np.cumsum(x, dtype=x.dtype)


def hanging_scan(x: np.ndarray) -> np.ndarray:
    """A target that never returns for n > 3 (as a chained scan waiting on an unscheduled block)."""
    import time

    while x.shape[0] > 3:
        time.sleep(1)
    return np.cumsum(x, dtype=x.dtype)


def nvcc_errors(source: str, workdir: Path, *, fmad: bool = True) -> str:
    """What nvcc says against ``source`` compiled for sm_90 with every warning an error (""
    where it compiles), or why it cannot run.  The device code is taken through the front end
    and NVVM to PTX at -O0: every template instantiation is checked as the C++ it is, in a
    quarter of the time the optimised build with ptxas takes (NVRTC builds the real code on
    the GPU, where the kernels then run)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return "nvcc is not on PATH"
    cu = Path(workdir) / "check.cu"
    cu.write_text(source)
    cmd = [nvcc, "-std=c++17", "-arch=sm_90", "-Werror", "all-warnings", "-ptx", "-Xcicc", "-O0",
           *([] if fmad else ["-fmad=false"]), str(cu), "-o", str(cu.with_suffix(".ptx"))]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return "" if proc.returncode == 0 else proc.stderr[-4000:] or f"nvcc exit {proc.returncode}"


def nvcc_errors_each(sources: dict[str, str], workdir: Path, *, fmad: bool = True
                     ) -> dict[str, str]:
    """What nvcc says against each of ``sources`` (name -> source), as :func:`nvcc_errors`
    would: one nvcc run takes them all (its start-up and host passes paid once), and only
    where that run fails is each compiled alone, so that each error is named by its source."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return dict.fromkeys(sources, "nvcc is not on PATH")
    files = []
    for i, source in enumerate(sources.values()):
        files.append(Path(workdir) / f"each{i}.cu")
        files[-1].write_text(source)
    cmd = [nvcc, "-std=c++17", "-arch=sm_90", "-Werror", "all-warnings", "-ptx", "-Xcicc", "-O0",
           *([] if fmad else ["-fmad=false"]), *map(str, files), "--output-directory", str(workdir)]
    if subprocess.run(cmd, capture_output=True, text=True).returncode == 0:
        return dict.fromkeys(sources, "")
    out = {}
    for i, (name, source) in enumerate(sources.items()):
        alone = Path(workdir) / f"alone{i}"
        alone.mkdir(exist_ok=True)
        out[name] = nvcc_errors(source, alone, fmad=fmad)
    return out


def raising_scan(x: np.ndarray) -> np.ndarray:
    """A target that raises a Python exception for n > 3 (its process goes on), and is right
    on any other input."""
    if x.shape[0] > 3:
        raise ValueError("too long")
    return np.cumsum(x, dtype=x.dtype)


def slow_scan(x: np.ndarray) -> np.ndarray:
    """A target that is right on every input and slow: about a microsecond per element and
    a millisecond per call (as a Python loop, or dask with tiny chunks), so that the top of
    a CPU ladder (2**20) costs seconds."""
    import time

    time.sleep(1e-3 + 1e-6 * x.shape[0])
    return np.cumsum(x, dtype=x.dtype)
