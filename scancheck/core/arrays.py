"""Arrays of any library, as every layer reads them: where they live and their host copies."""

from __future__ import annotations

from typing import Any

import numpy as np


def as_dtype(dtype: Any) -> np.dtype:
    """``dtype`` as a NumPy dtype; "bfloat16" is ml_dtypes' (imported on first use)."""
    if (dtype if isinstance(dtype, str) else getattr(dtype, "__name__", None)) == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


#: dtype_name's answers so far, by what it was asked: a dtype, a type or a name.
_NAMES: dict[Any, str] = {}


def dtype_name(dtype: Any) -> str:
    """``as_dtype(dtype).name``, remembered: NumPy 2 works a dtype's name out in Python, some
    5 us a call, and a check asks it of every case several times (in the CPU suite 460,000
    times, 2 % of its time).  Only a dtype, type or name of an unstructured dtype is
    remembered: NumPy scalars hash by value, and a record dtype equals its plain twin."""
    cacheable = isinstance(dtype, np.dtype | str | type)
    if cacheable and (name := _NAMES.get(dtype)) is not None:
        return name
    dt = as_dtype(dtype)
    if cacheable and dt.names is None:
        _NAMES[dtype] = dt.name
    return dt.name


def on_device(x: Any) -> bool:
    """Whether ``x`` is an array in CUDA device memory (CuPy, torch, JAX, Numba...)."""
    if hasattr(x, "__cuda_array_interface__"):
        return True
    dlpack_device = getattr(x, "__dlpack_device__", None)
    # DLPack device types 2, 3 and 13: CUDA, CUDA pinned host and CUDA managed memory.
    return dlpack_device is not None and int(dlpack_device()[0]) in (2, 3, 13)


def array_module(x: Any) -> Any:
    """CuPy for an array in device memory (:func:`on_device`), else NumPy."""
    if on_device(x):
        import cupy

        return cupy
    return np


def to_numpy(x: Any) -> np.ndarray:
    """A NumPy, CuPy or torch array on the host: a copy of device memory, host memory as it
    is (a NumPy array itself, a CPU tensor's view)."""
    if hasattr(x, "get"):
        return x.get()
    if hasattr(x, "detach"):
        import torch

        if x.dtype == torch.bfloat16:  # NumPy's bfloat16 is ml_dtypes': through the bits
            return x.detach().cpu().view(torch.int16).numpy().view(as_dtype("bfloat16"))
        return x.detach().cpu().numpy()
    return np.asarray(x)


def same_bits(a: Any, b: Any) -> np.ndarray:
    """Per element: identical bit patterns, or both NaN (GPUs return a canonical NaN)."""
    a, b = to_numpy(a), to_numpy(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        raise AssertionError(f"shape/dtype differ: {a.shape} {a.dtype} vs {b.shape} {b.dtype}")
    view = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    eq = a.view(view) == b.view(view)
    if a.dtype.kind == "f" or dtype_name(a.dtype) == "bfloat16":
        eq |= np.isnan(a) & np.isnan(b)
    return eq.all(axis=-1) if eq.ndim > 1 else eq


class KeptArrays:
    """Host arrays kept by key in this process, to be handed out again as copies (a caller
    may write into what it is given): at most ``limit`` bytes, the least recently used
    leaving first, and none larger than a quarter of that.  Thread-safe."""

    def __init__(self, limit: int) -> None:
        import threading
        from collections import OrderedDict

        self.limit = limit
        self._kept: OrderedDict[Any, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Any) -> np.ndarray | None:
        """A copy of the array kept under ``key``, or None."""
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
        return None if kept is None else kept.copy()

    def put(self, key: Any, array: np.ndarray) -> None:
        """Keep a copy of ``array`` under ``key`` (where it is small enough)."""
        if array.nbytes > self.limit // 4:
            return
        with self._lock:
            if key not in self._kept:
                self._kept[key] = array.copy()
                self._bytes += array.nbytes
            while self._bytes > self.limit:
                self._bytes -= self._kept.popitem(last=False)[1].nbytes

    def __contains__(self, key: Any) -> bool:
        return key in self._kept

    @property
    def nbytes(self) -> int:
        return self._bytes
