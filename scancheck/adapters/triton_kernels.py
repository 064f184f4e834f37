"""Triton scans of one block: ``tl.cumsum`` and ``tl.associative_scan`` of add, max or min,
forward or reverse, of a 1-D CUDA tensor of at most 2**16 elements.  Standalone (it imports
torch and Triton alone): a reproducer carries this file's text as it is."""

import torch
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _max(a, b):
    return tl.maximum(a, b)


@triton.jit
def _min(a, b):
    return tl.minimum(a, b)


@triton.jit
def _cumsum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=0, reverse=REVERSE), mask=mask)


@triton.jit
def _scan_kernel(x_ptr, out_ptr, n, ident, BLOCK: tl.constexpr, OP: tl.constexpr,
                 REVERSE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    # The lanes past n hold the identity: a reverse scan combines them into every output.
    x = tl.load(x_ptr + offs, mask=mask, other=ident)
    if OP == 0:
        y = tl.associative_scan(x, 0, _add, reverse=REVERSE)
    elif OP == 1:
        y = tl.associative_scan(x, 0, _max, reverse=REVERSE)
    else:
        y = tl.associative_scan(x, 0, _min, reverse=REVERSE)
    tl.store(out_ptr + offs, y, mask=mask)


#: The largest n one block scans here.
MAX_N = 2**16


def _identity(op, dtype):
    if op == "add":
        return 0
    if dtype.is_floating_point:
        return float("-inf") if op == "max" else float("inf")
    info = torch.iinfo(dtype)
    return info.min if op == "max" else info.max


def scan(x, api="tl.cumsum", op="add", reverse=False):
    """The scan of the 1-D CUDA tensor ``x`` by ``api``: "tl.cumsum", or
    "tl.associative_scan" of ``op`` ("add", "max" or "min"), in one block, as a new tensor."""
    n = x.shape[0]
    if n > MAX_N:
        raise ValueError(f"n = {n}: one block scans at most {MAX_N} elements here")
    x = x.contiguous()
    out = torch.empty_like(x)
    # A reverse scan combines the lanes past n into every output: one at least, so that a
    # suffix of NaN alone meets the identity at every n, a power of two included.
    block = max(16, triton.next_power_of_2(n + reverse))
    if api == "tl.cumsum":
        _cumsum_kernel[(1,)](x, out, n, BLOCK=block, REVERSE=reverse)
    else:
        _scan_kernel[(1,)](x, out, n, _identity(op, x.dtype), BLOCK=block,
                           OP=("add", "max", "min").index(op), REVERSE=reverse)
    return out
