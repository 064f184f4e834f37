"""CUDA sources and their compilation, shared by the kernels and the device oracle.

Where the ``.cu`` files live (a checkout's ``kernels/``, or the copy a wheel carries),
how a source is expanded with its headers (so CuPy's cache, keyed by the text, never
serves a stale binary), NVRTC compilation as nvcc compiles by default (:class:`IeeeModule`),
block-size validation and the shared-memory limits a launch must respect.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def _kernel_dir() -> Path:
    """kernels/ of a source checkout, else the copy a wheel carries as scancheck/_kernels."""
    package = Path(__file__).resolve().parent.parent
    checkout = package.parent / "kernels"
    if (checkout / "scan_ops.cuh").is_file():
        return checkout
    return package / "_kernels"


KERNEL_DIR = _kernel_dir()
#: NVRTC options of every kernel.  Bit-exact float arithmetic does not depend on them:
#: the functors in scan_ops.cuh use explicit IEEE instructions (CuPy appends -ftz=true).
NVRTC_OPTIONS = ("--std=c++17", "--fmad=false")
#: CuPy's kernel cache of the test sessions and of the GPU suite's warm step, where the user set
#: no ``CUPY_CACHE_DIR``: one directory, so that what the warm step compiles the tests load.
SUITE_CUPY_CACHE = Path(tempfile.gettempdir()) / "scancheck-cupy-cache"
MAX_THREADS = 1024
DEFAULT_SMEM_LIMIT = 48 * 1024


class LaunchError(ValueError):
    """A launch that would be wrong or impossible, refused before anything runs."""


def check_block(block: object) -> None:
    """Refuse a block size that is not a power of two of at most ``MAX_THREADS`` threads."""
    if not isinstance(block, int | np.integer) or block < 1 or block & (block - 1):
        raise LaunchError(f"block={block!r} must be a power of two")
    if block > MAX_THREADS:
        raise LaunchError(f"block={block} is over the limit of {MAX_THREADS} threads per block")

def staged(items: int, itemsize: int) -> int:
    """Elements of a warp's staging area of 32 * ``items`` values of ``itemsize`` bytes, with
    the padding of kernels/decoupled_lookback.cu's ``pad<T>``: one element every 32 (every 16
    for 8-byte elements)."""
    return 32 * items + (32 * items >> (4 if itemsize == 8 else 5))


def lookback_smem(block: int, items: int, scan_bytes: int, stage_bytes: int) -> int:
    """Dynamic shared memory of ``lookback_scan``: 33 scan elements (warp totals, the tile's
    prefix), then each warp's padded staging area of its elements as read and written."""
    return 33 * scan_bytes + (block // 32) * staged(items, stage_bytes) * stage_bytes

# -- sources and compilation ----------------------------------------------------------

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.M)


def expand_source(filename: str | Path, directory: Path = KERNEL_DIR) -> str:
    """The CUDA source with its local ``#include "..."`` headers inlined (each once).

    Inlining makes the source text the whole input, so CuPy's on-disk kernel cache,
    keyed by that text, can never serve a binary built from an older header.
    """
    seen: set[Path] = set()

    def expand(path: Path) -> str:
        if path in seen:
            return ""
        seen.add(path)
        text = path.read_text().replace("#pragma once", "")
        return _INCLUDE.sub(lambda m: expand(path.parent / m.group(1)), text)

    return expand(Path(directory) / filename)

class IeeeModule:
    """``code`` compiled by NVRTC as nvcc compiles it by default: subnormals kept (IEEE).

    CuPy's RawModule appends ``-ftz=true`` to every compile (cupy#9576), so float32
    subnormals in a user's kernel would read as zero under scancheck and nowhere else:
    a verdict scancheck's harness caused.  This calls NVRTC without that flag and loads
    the binary; a source that does not compile raises CuPy's ``CompileException``.
    Binaries are kept on disk (:func:`_cached_nvrtc`), as CuPy keeps its own, so that each
    process of a test session or a check loads them instead of compiling them again.
    """

    def __init__(self, code: str, options: tuple[str, ...] = ("--std=c++17",),
                 name_expressions: tuple[str, ...] | None = None) -> None:
        from cupy.cuda import function

        binary, mapping = _cached_nvrtc(code, options + ("-ftz=false",), name_expressions)
        self._names = dict(mapping or {})
        self._module = function.Module()
        self._module.load(binary)

    def get_function(self, name: str) -> Any:
        """The kernel ``name``: an extern "C" name or one of the name expressions."""
        return self._module.get_function(self._names.get(name, name))


def _cached_nvrtc(code: str, options: tuple[str, ...], names: tuple[str, ...] | None
                  ) -> tuple[bytes, dict]:
    """NVRTC's binary and name mapping for ``code``, from ``$SCANCHECK_NVRTC_CACHE`` (default
    ``~/.cache/scancheck/nvrtc``; empty: none kept) where this NVRTC compiled the same text
    with the same options for the same architecture before; compiled and kept otherwise."""
    import cupy
    from cupy.cuda import compiler, nvrtc

    where = os.environ.get("SCANCHECK_NVRTC_CACHE",
                           str(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                               / "scancheck" / "nvrtc"))
    arch = cupy.cuda.Device().compute_capability
    key = hashlib.sha256("\0".join((cupy.__version__, str(nvrtc.getVersion()), str(arch),
                                     *options, *(names or ()), code)).encode()).hexdigest()
    path = Path(where) / f"{key}.pickle" if where else None
    if path is not None:
        with contextlib.suppress(OSError, pickle.PickleError, EOFError, ValueError):
            binary, mapping = pickle.loads(path.read_bytes())
            return binary, mapping
    binary, mapping = compiler.compile_using_nvrtc(code, options, name_expressions=names)
    if path is not None:
        # Written whole, then renamed: a process beside this one reads all of it or none.
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            part = path.with_suffix(f".{os.getpid()}.part")
            part.write_bytes(pickle.dumps((binary, dict(mapping or {}))))
            part.replace(path)
    return binary, mapping


def _function(kernel: Any) -> int:
    """The CUfunction of a CuPy RawKernel, or of a Function a module loaded."""
    return int(getattr(kernel, "kernel", kernel).ptr)


def thread_limit(kernel: Any) -> int:
    """The most threads a block of ``kernel`` may have on this device, as its registers allow
    (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)."""
    from cupy.cuda import driver

    return int(driver.funcGetAttribute(0, _function(kernel)))


def allow_shared_memory(kernel: Any, nbytes: int) -> None:
    """Let ``kernel`` (a CuPy RawKernel, or a Function an :class:`IeeeModule` loaded) launch
    with ``nbytes`` of dynamic shared memory, past the 48 KiB every kernel may use (up to
    that, nothing is to be done)."""
    if nbytes <= DEFAULT_SMEM_LIMIT:
        return
    if hasattr(kernel, "max_dynamic_shared_size_bytes"):
        kernel.max_dynamic_shared_size_bytes = nbytes
        return
    from cupy.cuda import driver

    # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES is 8 in every CUDA since 9.0.
    attribute = getattr(driver, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", 8)
    driver.funcSetAttribute(kernel.ptr, attribute, nbytes)


def device_smem_limit() -> int:
    """Shared memory one block may use on the current device (opt-in maximum)."""
    return int(_attributes(_current_device()).get("MaxSharedMemoryPerBlockOptin",
                                                  DEFAULT_SMEM_LIMIT))


def device_sm_count() -> int:
    """Streaming multiprocessors of the current device."""
    return int(_attributes(_current_device())["MultiProcessorCount"])


def _current_device() -> int:
    import cupy as cp

    return cp.cuda.Device().id


@functools.cache
def _attributes(device: int) -> dict[str, int]:
    # Read once a device: CuPy reads every attribute of the device to give one.
    import cupy as cp

    return dict(cp.cuda.Device(device).attributes)


def device_l2_bytes(device: int) -> int:
    """Bytes of L2 cache on CUDA device ``device``."""
    return int(_attributes(device)["L2CacheSize"])


# -- the input-unchanged check ------------------------------------------------------------

_UNSIGNED = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}


@functools.cache
def _first_difference_kernel(itemsize: int, device: int) -> Any:
    name = f"first_difference<{_UNSIGNED[itemsize]}>"
    module = IeeeModule(expand_source("first_difference.cu", KERNEL_DIR / "oracle"),
                        name_expressions=(name,))
    return module.get_function(name)


def first_difference(a: Any, b: Any) -> int:
    """The first flat index at which C-contiguous CuPy arrays ``a`` and ``b`` (same shape and
    itemsize) differ bit for bit, or -1: one kernel compiled once per element width."""
    import cupy as cp

    if a.shape != b.shape or a.itemsize != b.itemsize or a.itemsize not in _UNSIGNED:
        raise ValueError(f"a and b must have one shape and an itemsize of 1, 2, 4 or 8 bytes; "
                         f"got {a.shape}/{a.itemsize} and {b.shape}/{b.itemsize}")
    if not (a.flags.c_contiguous and b.flags.c_contiguous):
        raise ValueError("a and b must be C-contiguous")
    n = a.size
    if n == 0:
        return -1
    none = np.iinfo(np.uint64).max
    first = cp.full(1, none, dtype=cp.uint64)
    kernel = _first_difference_kernel(a.itemsize, cp.cuda.Device().id)
    kernel((min(-(-n // 256), 4096),), (256,), (a, b, np.int64(n), first))
    at = int(first.get()[0])
    return -1 if at == none else at
