"""Assertions for scan results, in the manner of ``numpy.testing`` and ``cupy.testing``."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
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


#: nvcc's flags for a check: sm_90, every warning an error, device code to PTX at -O0.
_NVCC_FLAGS = ("-std=c++17", "-arch=sm_90", "-Werror", "all-warnings", "-ptx", "-Xcicc", "-O0")


def nvcc_errors(source: str, workdir: Path, *, fmad: bool = True) -> str:
    """What nvcc says against ``source`` compiled for sm_90 with every warning an error (""
    where it compiles), or why it cannot run.  The device code is taken through the front end
    and NVVM to PTX at -O0: every template instantiation is checked as the C++ it is, in a
    quarter of the time the optimised build with ptxas takes (NVRTC builds the real code on
    the GPU, where the kernels then run).  A source this nvcc compiled cleanly before with
    these flags is not compiled again (:func:`_compiled_before`)."""
    return nvcc_errors_each({"source": source}, workdir, fmad=fmad)["source"]


def nvcc_errors_each(sources: dict[str, str], workdir: Path, *, fmad: bool = True
                     ) -> dict[str, str]:
    """What nvcc says against each of ``sources`` (name -> source), as :func:`nvcc_errors`
    would: one nvcc run takes those not compiled cleanly before (its start-up and host passes
    paid once), and only where that run fails is each compiled alone, so that each error is
    named by its source."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return dict.fromkeys(sources, "nvcc is not on PATH")
    flags = (*_NVCC_FLAGS, *([] if fmad else ["-fmad=false"]))
    out = {name: "" for name, source in sources.items() if _compiled_before(nvcc, flags, source)}
    todo = {name: source for name, source in sources.items() if name not in out}
    files = []
    for i, source in enumerate(todo.values()):
        files.append(Path(workdir) / f"each{i}.cu")
        files[-1].write_text(source)
    if len(todo) > 1:
        cmd = [nvcc, *flags, *map(str, files), "--output-directory", str(workdir)]
        if subprocess.run(cmd, capture_output=True, text=True).returncode == 0:
            for source in todo.values():
                _compiled_before(nvcc, flags, source, record=True)
            return dict.fromkeys(sources, "")
    for f, (name, source) in zip(files, todo.items()):
        proc = subprocess.run([nvcc, *flags, str(f), "-o", str(f.with_suffix(".ptx"))],
                              capture_output=True, text=True)
        out[name] = "" if proc.returncode == 0 else (proc.stderr[-4000:]
                                                     or f"nvcc exit {proc.returncode}")
        if not out[name]:
            _compiled_before(nvcc, flags, source, record=True)
    return {name: out[name] for name in sources}


@functools.cache
def _nvcc_version(nvcc: str) -> str:
    return subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout


def nvcc_shared_library(source: str, workdir: Path, flags: tuple[str, ...] = ()) -> Path:
    """``source`` built by nvcc with ``flags`` into a shared library of host code, once per
    machine: kept where :func:`_compiled_before` keeps its notes, under the SHA-256 of nvcc's
    version, the flags and the source, and built by one process at a time (every xdist worker
    of a session wants it; the others wait, then load the first one's).  Where no cache is
    kept (``SCANCHECK_NVCC_CACHE`` empty) it is built in ``workdir``.  A RuntimeError holding
    nvcc's words where it does not build."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc is not on PATH")
    flags = (*flags, "-Xcompiler", "-fPIC", "-shared")
    key = hashlib.sha256("\0".join((_nvcc_version(nvcc), *flags, source)).encode()).hexdigest()
    where = _nvcc_cache()
    if not where:
        return _build_shared(nvcc, flags, source, Path(workdir), Path(workdir) / "lib.so")
    from .core.locks import file_lock

    lib = Path(where) / f"{key}.so"
    with file_lock("scancheck-nvcc.lock"):
        if not lib.is_file():
            lib.parent.mkdir(parents=True, exist_ok=True)
            _build_shared(nvcc, flags, source, Path(workdir), lib)
    return lib


def _build_shared(nvcc: str, flags: tuple[str, ...], source: str, workdir: Path, lib: Path
                  ) -> Path:
    src = workdir / "lib.cu"
    src.write_text(source)
    part = lib.with_name(f".{lib.name}.{os.getpid()}")
    proc = subprocess.run([nvcc, *flags, str(src), "-o", str(part)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-4000:] or f"nvcc exit {proc.returncode}")
    os.replace(part, lib)  # whole, or not there: another process may load it at once
    return lib


def _nvcc_cache() -> str:
    """Where nvcc's clean compiles are noted and its libraries kept ("": nowhere)."""
    return os.environ.get("SCANCHECK_NVCC_CACHE",
                          str(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                              / "scancheck" / "nvcc"))


def _compiled_before(nvcc: str, flags: tuple[str, ...], source: str, record: bool = False
                     ) -> bool:
    """Whether this nvcc (its ``--version``) compiled ``source`` with ``flags`` cleanly before
    (with ``record``: note that it did).  The notes live in ``$SCANCHECK_NVCC_CACHE``
    (default ``~/.cache/scancheck/nvcc``; empty: none kept), one empty file per SHA-256 of
    version, flags and source: the checked .cu is whole (its headers expanded), so a change
    anywhere is a new key, and only clean compiles are noted -- an error is always shown."""
    where = _nvcc_cache()
    if not where:
        return False
    key = hashlib.sha256("\0".join((_nvcc_version(nvcc), *flags, source)).encode()).hexdigest()
    note = Path(where) / key
    if not record:
        return note.is_file()
    with contextlib.suppress(OSError):  # no cache where it cannot be written: nothing lost
        note.parent.mkdir(parents=True, exist_ok=True)
        note.touch()
    return True


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
