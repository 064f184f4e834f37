"""Triton's ``tl.associative_scan`` with a user's combine over pairs: targets to copy and check.

    scancheck check examples.triton_assoc_scan:affine_scan
    scancheck check examples.triton_assoc_scan:affine_scan_reverse
    scancheck check examples.triton_assoc_scan:segmented_cumsum

The combine is non-commutative: the affine maps x -> m*x + c modulo 2**32 (the
first-order recurrence's pair operator, (m1, c1) then (m2, c2) = (m2*m1, m2*c1 + c2)), and
the segmented sum's (head flag, value) operator.  Any n: each program scans a tile of
``BLOCK`` elements with ``tl.associative_scan`` (``reverse=True`` for the reverse scan, which
Triton defines as flip(scan(flip(x))): scancheck's ``reverse='flip'``), the tiles' totals
are scanned by the same function, and each tile combines the carry of the tiles before it
(after it, in reverse) with its own scan, the carry as the earlier operand.

The affine scans take the pairs as NumPy uint32 arrays and return them so (the leaves go
to the GPU as int32, the same bits: + and * wrap alike); the segmented sum takes a NumPy
array and its head flags.  ``TRITON_INTERPRET=1`` runs the kernels on the CPU.
"""

from __future__ import annotations

import os

import numpy as np
import torch
import triton
import triton.language as tl

from scancheck import Monoid, TargetSpec

#: Elements one program scans: small, so that tile seams are met at small n.
BLOCK = 256
#: Triton's interpreter runs on CPU tensors.
DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


def affine(earlier, later):
    """The affine map ``earlier`` then ``later``, on NumPy arrays (the oracle's combine)."""
    return (later[0] * earlier[0], later[0] * earlier[1] + later[1])


def _maps(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    # Odd multipliers: every map is invertible, so no element's effect can vanish.
    m = rng.integers(0, 2**31, shape, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    return (m, rng.integers(0, 2**32, shape, dtype=np.uint32))


AFFINE = Monoid(affine, (np.uint32(1), np.uint32(0)), name="affine map mod 2**32",
                elements=_maps)


@triton.jit
def _combine(a0, a1, b0, b1, OP: tl.constexpr):
    if OP == "affine":
        return b0 * a0, b0 * a1 + b1
    else:  # "segmented": (flag, value); a head flag in b restarts the sum at b's value
        return a0 | b0, tl.where(b0 != 0, b1, a1 + b1)


@triton.jit
def _affine_tl(a0, a1, b0, b1):
    return _combine(a0, a1, b0, b1, "affine")


@triton.jit
def _segmented_tl(a0, a1, b0, b1):
    return _combine(a0, a1, b0, b1, "segmented")


@triton.jit
def _scan_tiles(x0_ptr, x1_ptr, y0_ptr, y1_ptr, n, ID0: tl.constexpr, ID1: tl.constexpr,
                OP: tl.constexpr, REVERSE: tl.constexpr, BLOCK: tl.constexpr):
    # Each tile scanned alone, padded with the identity; the padded outputs are kept (the
    # tile's total is the last of them, or the first in reverse).
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x0 = tl.load(x0_ptr + offs, mask=mask, other=ID0)
    x1 = tl.load(x1_ptr + offs, mask=mask, other=ID1)
    if OP == "affine":
        y0, y1 = tl.associative_scan((x0, x1), 0, _affine_tl, reverse=REVERSE)
    else:
        y0, y1 = tl.associative_scan((x0, x1), 0, _segmented_tl, reverse=REVERSE)
    tl.store(y0_ptr + offs, y0)
    tl.store(y1_ptr + offs, y1)


@triton.jit
def _add_carry(y0_ptr, y1_ptr, c0_ptr, c1_ptr, tiles, ID0: tl.constexpr, ID1: tl.constexpr,
               OP: tl.constexpr, REVERSE: tl.constexpr, BLOCK: tl.constexpr):
    # The carry (scan of the tiles before this one, or after it in reverse) is the earlier
    # operand; the first tile in scan order has none (the identity).
    pid = tl.program_id(0)
    src = pid + 1 if REVERSE else pid - 1
    has = (src >= 0) & (src < tiles)
    c0 = tl.load(c0_ptr + src, mask=has, other=ID0)
    c1 = tl.load(c1_ptr + src, mask=has, other=ID1)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    y0 = tl.load(y0_ptr + offs)
    y1 = tl.load(y1_ptr + offs)
    z0, z1 = _combine(c0, c1, y0, y1, OP)
    tl.store(y0_ptr + offs, z0)
    tl.store(y1_ptr + offs, z1)


def scan_pairs(x0: torch.Tensor, x1: torch.Tensor, op: str, identity: tuple[int, int],
               reverse: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """The inclusive scan of the pairs (x0, x1) with ``op`` ("affine" or "segmented"), any
    length, padded to whole tiles (the padding is cut off by the caller)."""
    n = x0.shape[0]
    tiles = max(1, triton.cdiv(n, BLOCK))
    y0 = torch.empty(tiles * BLOCK, dtype=x0.dtype, device=x0.device)
    y1 = torch.empty(tiles * BLOCK, dtype=x1.dtype, device=x1.device)
    args = dict(ID0=identity[0], ID1=identity[1], OP=op, REVERSE=reverse, BLOCK=BLOCK)
    _scan_tiles[(tiles,)](x0, x1, y0, y1, n, **args)
    if tiles > 1:
        at = slice(0, None, BLOCK) if reverse else slice(BLOCK - 1, None, BLOCK)
        c0, c1 = scan_pairs(y0[at].contiguous(), y1[at].contiguous(), op, identity, reverse)
        _add_carry[(tiles,)](y0, y1, c0, c1, tiles, **args)
    return y0, y1


def _affine_scan(elems, reverse: bool):
    m, c = (np.ascontiguousarray(v, dtype=np.uint32) for v in elems)
    if m.shape[0] == 0:
        return m.copy(), c.copy()
    t0, t1 = (torch.from_numpy(v.view(np.int32).copy()).to(DEVICE) for v in (m, c))
    y0, y1 = scan_pairs(t0, t1, "affine", (1, 0), reverse)
    n = m.shape[0]
    return tuple(y[:n].cpu().numpy().view(np.uint32) for y in (y0, y1))


def affine_scan(elems):
    """The inclusive scan of affine maps (m, c), uint32 arrays: a forward scan."""
    return _affine_scan(elems, reverse=False)


def affine_scan_reverse(elems):
    """The reverse scan of affine maps, as Triton's ``reverse=True`` computes it."""
    return _affine_scan(elems, reverse=True)


def segmented_cumsum(x, flags):
    """The inclusive sum of ``x`` restarted at every head flag (element 0 starts a segment),
    as a Triton scan of (flag, value) pairs."""
    x = np.ascontiguousarray(x)
    if x.shape[0] == 0:
        return x.copy()
    f = np.asarray(flags, dtype=bool).astype(np.int32)
    f[0] = 1
    y0, y1 = scan_pairs(torch.from_numpy(f).to(DEVICE), torch.from_numpy(x.copy()).to(DEVICE),
                        "segmented", (0, 0), reverse=False)
    return y1[:x.shape[0]].cpu().numpy()


affine_scan.scan_spec = TargetSpec(op="examples.triton_assoc_scan:AFFINE", max_n=2**16)
affine_scan_reverse.scan_spec = TargetSpec(op="examples.triton_assoc_scan:AFFINE",
                                           reverse="flip", max_n=2**16)
segmented_cumsum.scan_spec = TargetSpec(segments="flags", max_n=2**16,
                                        dtypes=("float32", "float64", "int32", "int64"))
