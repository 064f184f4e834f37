"""A prefix sum in Triton, built on ``tl.associative_scan``: a target to copy and check.

    scancheck check examples.triton_scan:cumsum

Reduce-then-scan in three steps: each program scans its block of ``BLOCK`` elements with
``tl.associative_scan`` and writes the block's total; the totals are scanned by the same
function (recursively, until one block holds them); each block then adds the scan of the
totals before it.  Every index is 64-bit, so the scan is right past 2**31 elements, and
the block totals are summed in the input's type, as a library would.

It takes any 1-D CUDA array (CuPy, torch, anything with ``__cuda_array_interface__``) of
float32, float64, int32 or int64 and returns a torch tensor.  ``SCAN_SPEC`` tells
scancheck how to call it.
"""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from scancheck import TargetSpec

SCAN_SPEC = TargetSpec(device="gpu", dtypes=("float32", "float64", "int32", "int64"),
                       allows_empty=True)
BLOCK = 1024


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _scan_blocks(x_ptr, out_ptr, totals_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.associative_scan(x, 0, _add), mask=mask)
    tl.store(totals_ptr + pid, tl.reduce(x, 0, _add))


@triton.jit
def _add_offsets(out_ptr, scanned_totals_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # Block 0 has nothing before it; every other block adds the totals of those before it.
    before = tl.load(scanned_totals_ptr + pid - 1, mask=pid > 0, other=0)
    y = tl.load(out_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, y + before, mask=mask)


def cumsum(x: Any) -> torch.Tensor:
    """The inclusive prefix sum of a 1-D CUDA array, as a torch tensor on its device."""
    t = torch.as_tensor(x, device="cuda").contiguous()
    out = torch.empty_like(t)
    n = t.numel()
    if n == 0:
        return out
    blocks = triton.cdiv(n, BLOCK)
    totals = torch.empty(blocks, dtype=t.dtype, device=t.device)
    _scan_blocks[(blocks,)](t, out, totals, n, BLOCK=BLOCK)
    if blocks > 1:
        _add_offsets[(blocks,)](out, cumsum(totals), n, BLOCK=BLOCK)
    return out
