"""flash-linear-attention's chunk cumsum kernels (``fla-core``: ``fla.ops.utils.cumsum``) as
built-in targets, with the contracts they declare.

``chunk_global_cumsum(s, reverse=, cu_seqlens=)`` scans ``s`` of shape [B, T, H] or
[B, T, H, D] along T, each sequence of a packed batch on its own where ``cu_seqlens`` (int32
offsets, B = 1) is given, loading every element as float32, accumulating in float32 and
returning float32 (``output_dtype=torch.float``, its default): a float16 or bfloat16 input
is promoted.  ``chunk_local_cumsum(g, chunk_size, ...)`` scans each chunk of ``chunk_size``
steps of every sequence alone; its target adds each chunk's carry (the totals of the chunks
before it in its sequence, after it in reverse) on the host, as fla's chunked kernels
consume it, so that it too is judged as a whole-sequence scan.  Each kernel is checked in
one autotuning configuration (:data:`PINNED`), named in the global targets' names.  The torch and fla imports
are made when a target is called; the targets are unavailable, saying why, where fla-core,
its einops, Triton or a GPU is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.diagnosis import Cause
from ..targets.spec import TargetSpec
from ..targets.target import Witness
from .known import KnownBug, Symptom
from .rows import Row

#: The input dtypes fla's cumsum kernels take (loaded as float32), and their promotion:
#: every one returns float32.
FLA_DTYPES: tuple[str, ...] = ("float32", "float16", "bfloat16")
FLA_PROMOTE: tuple[tuple[str, str], ...] = (("float16", "float32"), ("bfloat16", "float32"))
#: The chunk of the local cumsum targets: fla's own chunk size in its chunked kernels.
CHUNK = 64


#: The one configuration of each autotuned kernel that is checked (every configuration is a
#: kernel of its own; autotuning fla's global kernels tries 48 of them for every new head
#: count, a minute each time): the global kernels' chunk of BT = 32 steps (the most chunk
#: seams per sequence), and 4 warps for all.
PINNED = {"chunk_global_cumsum_scalar_kernel": {"BT": 32}, "chunk_global_cumsum_vector_kernel":
          {"BT": 32}, "chunk_local_cumsum_scalar_kernel": {},
          "chunk_local_cumsum_vector_kernel": {"BS": 32}}


def _fla() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """fla's (chunk_global_cumsum, chunk_local_cumsum), imported here, each kernel's
    autotuning pinned to its :data:`PINNED` configuration (a test replaces this function)."""
    from fla.ops.utils import cumsum as module

    for name, kwargs in PINNED.items():
        pin_config(getattr(module, name), kwargs, num_warps=4)
    return module.chunk_global_cumsum, module.chunk_local_cumsum


def pin_config(kernel: Any, kwargs: dict[str, int], num_warps: int) -> None:
    """Leave the autotuner under ``kernel`` (through its heuristics) one configuration: the
    first with ``kwargs`` and ``num_warps``; a RuntimeError naming the kernel where it has
    none such (a newer fla changed its configurations: pick again)."""
    tuner = kernel
    while not hasattr(tuner, "configs"):
        tuner = tuner.fn
    keep = [c for c in tuner.configs if c.num_warps == num_warps and all(
        c.kwargs.get(k) == v for k, v in kwargs.items())]
    if not keep:
        raise RuntimeError(f"fla kernel {getattr(tuner, 'fn', tuner)} has no autotuning "
                           f"configuration with {kwargs}, num_warps={num_warps}")
    tuner.configs = keep[:1]


def fla_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The [1, T, H] or [1, T, H, D] shape fla scans a (T, ...) array as, along T: one head for
    1-D, the heads for 2-D, the last axis as D for 3-D and more (the axes between as heads)."""
    t, rest = shape[0], shape[1:]
    if len(rest) <= 1:
        return (1, t, *(rest or (1,)))
    return (1, t, int(np.prod(rest[:-1], dtype=np.int64)), rest[-1])


def to_fla(x: np.ndarray, device: str) -> Any:
    """``x`` (T, ...) as the torch tensor fla takes, on ``device`` (bfloat16 through its bits)."""
    import torch

    x = np.ascontiguousarray(x)
    if x.dtype.name == "bfloat16":
        t = torch.from_numpy(x.view(np.int16).copy()).view(torch.bfloat16)
    else:
        t = torch.from_numpy(x.copy())
    return t.reshape(fla_shape(x.shape)).to(device)


def add_carries(local: np.ndarray, bounds: np.ndarray, chunk: int, reverse: bool) -> np.ndarray:
    """A chunk-local scan (axis 0, float32) made whole per sequence: each chunk's outputs plus
    the sum, in float32 and in scan order, of the totals of the chunks before it in its
    sequence (after it, in reverse); ``bounds`` the sequences' offsets (0 ... T)."""
    out = local.copy()
    for bos, eos in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        starts = list(range(bos, eos, chunk))
        order = starts[::-1] if reverse else starts
        carry = np.zeros(local.shape[1:], np.float32)
        for s in order:
            e = min(s + chunk, eos)
            total = local[s] if reverse else local[e - 1]  # the chunk's own total
            out[s:e] = local[s:e] + carry
            carry = carry + total
    return out


def fla_cumsum(kind: str, reverse: bool, segmented: bool, device: str = "cuda"
               ) -> Callable[..., np.ndarray]:
    """fla's ``chunk_<kind>_cumsum`` (kind "global" or "local") of a (T, ...) array along T, as
    a target: called ``fn(x, offsets)`` (int32 cu_seqlens) where ``segmented``, else ``fn(x)``
    (one sequence); float32 out; the local kind carried across its chunks (:func:`add_carries`)."""
    def run(x: np.ndarray, offsets: np.ndarray | None = None) -> np.ndarray:
        import torch

        glob, local = _fla()
        t = x.shape[0]
        cu = None if offsets is None else torch.from_numpy(
            np.asarray(offsets, dtype=np.int32).copy()).to(device)
        g = to_fla(x, device)
        if kind == "global":
            o = glob(g, reverse=reverse, cu_seqlens=cu)
        else:
            o = local(g, CHUNK, reverse=reverse, cu_seqlens=cu)
        out = o.float().cpu().numpy().reshape((t, *x.shape[1:]))
        if kind == "local":
            bounds = np.asarray(offsets if offsets is not None else [0, t], dtype=np.int64)
            out = add_carries(out, bounds, CHUNK, reverse)
        return out

    if segmented:
        return run
    return lambda x: run(x)


def fla_rows(device: str = "cuda") -> list[Row]:
    """fla's chunk cumsum targets, forward and reverse, with and without cu_seqlens, on
    ``device`` (a GPU is needed where it is "cuda")."""
    out = []
    # T = 0 launches a grid of no programs (refused); one sequence past 2**18 steps is
    # slow on the host's carries and says nothing new.
    base = dict(axis=0, dtypes=FLA_DTYPES, promote=FLA_PROMOTE, allows_empty=False,
                max_n=2**18)
    for kind in ("global", "local"):
        for segmented in (True, False):
            for reverse in (False, True):
                tags = ([f"chunk {CHUNK}, carried"] if kind == "local" else ["BT 32"]) + (
                    ["cu_seqlens"] if segmented else []) + (["reverse"] if reverse else [])
                name = f"fla chunk_{kind}_cumsum ({', '.join(tags)})"
                spec = TargetSpec(segments="offsets:int32" if segmented else None,
                                  reverse=reverse, **base)
                # fla imports einops and Triton: each missing one is a reason of its own.
                out.append(Row(name, fla_cumsum(kind, reverse, segmented, device), spec,
                               needs=("fla", "einops", "triton", "torch"), gpu=device == "cuda",
                               api=f"fla chunk_{kind}_cumsum",
                               mode=(("cu_seqlens", str(segmented).lower()),
                                     ("reverse", str(reverse).lower()))))
    return out


ROWS: tuple[Row, ...] = tuple(fla_rows())

KNOWN: tuple[KnownBug, ...] = (
    KnownBug("fla-cumsum-no-features", None,
             "chunk_global_cumsum of a [B, T, H, 0] tensor (no features) raises "
             "ZeroDivisionError (the vector kernel's block of features is 0 wide)", "fla",
             ("fla-core",), "0.6.0", None,
             ("fla chunk_global_cumsum (BT 32)", "fla chunk_global_cumsum (BT 32, reverse)"),
             (Symptom("rows", Cause.LOGIC, empty=True),), "not reported upstream",
             "docs/findings/fla_cumsum_empty_feature_dim.py", gpu=True,
             # (3, 2, 0) scanned along its first axis: [1, 3, 2, 0] to fla.
             witnesses=(Witness("rows", 8, "float32", "uniform", 494),)),
    KnownBug("fla-local-cumsum-heads", None,
             "chunk_local_cumsum of a [B, T, H, D] tensor with B * H past 65,535 fails to "
             "launch (Triton Error [CUDA]: invalid argument: B * H is the grid's second "
             "axis)", "fla", ("fla-core",), "0.6.0", None,
             ("fla chunk_local_cumsum (chunk 64, carried)",
              "fla chunk_local_cumsum (chunk 64, carried, reverse)"),
             (Symptom("rows", Cause.FAULT),), "not reported as such: the same limit was "
             "lifted for other kernels (fla-org/flash-linear-attention#1077 and #1174, "
             "merged; #1239, open)",
             "docs/findings/fla_chunk_local_cumsum_heads_past_65535.py", gpu=True,
             # (1, 65536, 2) scanned along its first axis: [1, 1, 65536, 2] to fla.
             witnesses=(Witness("rows", 131072, "float32", "uniform", 11),)),
)
