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
    """A host copy of a NumPy, CuPy or torch array."""
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
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        eq |= np.isnan(a) & np.isnan(b)
    return eq.all(axis=-1) if eq.ndim > 1 else eq
