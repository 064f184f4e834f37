"""A prefix sum in ``numba.cuda``: a target to copy and check.

    scancheck check examples.numba_scan:cumsum

Reduce-then-scan in three launches: each block scans its ``BLOCK`` elements in shared
memory (Hillis-Steele, double-buffered so that no thread reads a slot another is writing)
and writes the block's total; the totals are scanned by the same function, recursively;
each block then adds the scan of the totals before it.  Indices are 64-bit (Numba's
default), so the scan is right past 2**31 elements.

It takes any 1-D CUDA array (CuPy, torch, anything with ``__cuda_array_interface__``) of
float32, float64, int32 or int64 and returns a CuPy array.  ``SCAN_SPEC`` tells scancheck
how to call it.
"""

from __future__ import annotations

import functools
from typing import Any

import cupy as cp
import numpy as np

# numba-cuda 0.30 registers an overload for np.row_stack, which NumPy 2.5 removed, so that
# no kernel compiles beside NumPy 2.5 (NVIDIA/numba-cuda#907, which its maintainers do not
# plan to fix; docs/findings.md).  row_stack was vstack under another name.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

import numba  # noqa: E402
from numba import cuda  # noqa: E402

from scancheck import TargetSpec

SCAN_SPEC = TargetSpec(device="gpu", dtypes=("float32", "float64", "int32", "int64"),
                       allows_empty=True)
BLOCK = 512


@functools.cache
def _kernels(dtype: str) -> tuple[Any, Any]:
    """The two kernels for one element type: a shared array's type is fixed at compile time."""
    element = numba.from_dtype(cp.dtype(dtype))

    @cuda.jit
    def scan_blocks(x, out, totals):
        buf = cuda.shared.array((2, BLOCK), element)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * BLOCK + t
        buf[0, t] = x[i] if i < x.shape[0] else 0
        cuda.syncthreads()
        src = 0
        step = 1
        while step < BLOCK:
            v = buf[src, t]
            if t >= step:
                v += buf[src, t - step]
            buf[1 - src, t] = v
            src = 1 - src
            step *= 2
            cuda.syncthreads()
        if i < x.shape[0]:
            out[i] = buf[src, t]
        if t == BLOCK - 1:
            totals[cuda.blockIdx.x] = buf[src, t]

    @cuda.jit
    def add_offsets(out, scanned_totals):
        b = cuda.blockIdx.x
        i = b * BLOCK + cuda.threadIdx.x
        if b > 0 and i < out.shape[0]:
            out[i] += scanned_totals[b - 1]

    return scan_blocks, add_offsets


def cumsum(x: Any) -> cp.ndarray:
    """The inclusive prefix sum of a 1-D CUDA array, as a CuPy array on its device."""
    a = cp.ascontiguousarray(cp.asarray(x))
    out = cp.empty_like(a)
    n = a.shape[0]
    if n == 0:
        return out
    blocks = -(-n // BLOCK)
    totals = cp.empty(blocks, dtype=a.dtype)
    scan_blocks, add_offsets = _kernels(a.dtype.name)
    scan_blocks[blocks, BLOCK](a, out, totals)
    if blocks > 1:
        add_offsets[blocks, BLOCK](out, cumsum(totals))
    return out
