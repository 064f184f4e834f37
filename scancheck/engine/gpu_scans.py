"""Built-in scans of torch's generic ``associative_scan`` and scancheck's segmented kernel.

* ``torch._higher_order_ops.associative_scan.associative_scan(combine_fn, xs, dim,
  reverse=, combine_mode=)``: ``combine_mode='generic'`` run eagerly (torch's odd-even
  recursion over the vmapped combine, on CPU or CUDA tensors) and ``'pointwise'`` under
  ``torch.compile`` (Inductor lowers it to a Triton scan; CUDA tensors only), forward and
  reverse (torch flips the data, scans and flips back: ``reverse='flip'``).  Each takes the
  combine (``TargetSpec(combine=True)``) and is driven by scancheck's probe monoids, whose
  combines run on torch tensors as they are (:func:`to_torch` carries their leaves).
* The segmented sum as torch's associative scan of (flag, value) pairs (``segments='flags'``).
* ``kernels/blelloch.cu``'s head-flag segmented sum (``segmented_add``) as a segmented
  target, beside its CPU model, which it must equal bit for bit.

Every torch or CUDA import is made when a target is called, so that this module loads
anywhere; where torch or a GPU is missing the targets are listed unavailable, saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.dtypes import KERNEL_DTYPES
from ..core.monoids import Leaves, Monoid
from .cccl_scans import cccl_targets
from .fla_scans import fla_targets
from .spec import TargetSpec
from .targets import PerCombine, Target, builtin, tupled

#: Monoids whose combine touches its unsigned leaves with + - * alone: ring operations
#: modulo 2**bits, whose bits are the same on the signed type of the same width.  Their
#: unsigned leaves travel to torch as that signed type (torch 2.13 has few unsigned kernels
#: beyond uint8, on CUDA and in Inductor fewer still); any other monoid's uint16 and uint32
#: leaves travel as int64, which holds their values (a compare orders them alike there).
RING_MONOIDS: frozenset[str] = frozenset({"affine mod 2**32", "sequence hash"})


def carrier_dtype(monoid: Monoid | None, dtype: np.dtype) -> np.dtype:
    """The dtype a leaf of ``dtype`` travels to torch in: the signed type of its width for an
    unsigned leaf of a :data:`RING_MONOIDS` monoid (the same bits), int64 for any other
    monoid's uint16 or uint32 leaf (the same values), else its own."""
    dtype = np.dtype(dtype)
    if monoid is None or dtype.kind != "u" or dtype.itemsize == 1:
        return dtype
    if monoid.name in RING_MONOIDS:
        return np.dtype(f"int{8 * dtype.itemsize}")
    return np.dtype(np.int64) if dtype.itemsize <= 4 else dtype


def _carried(v: np.ndarray, carrier: np.dtype) -> np.ndarray:
    """``v`` in ``carrier`` (or back): the same bits at the same width, else the same values."""
    return v.view(carrier) if v.dtype.itemsize == carrier.itemsize else v.astype(carrier)


def to_torch(monoid: Monoid | None, elems: Leaves, device: str) -> tuple[Any, ...]:
    """``elems`` (NumPy leaves) as torch tensors on ``device``, each in its
    :func:`carrier_dtype`, copied."""
    import torch

    out = []
    for v in elems:
        v = np.ascontiguousarray(v)
        out.append(torch.from_numpy(_carried(v, carrier_dtype(monoid, v.dtype)).copy()
                                    ).to(device))
    return tuple(out)


def from_torch(monoid: Monoid | None, out: Any, dtypes: tuple[np.dtype, ...]) -> Leaves:
    """A torch scan's leaves back as NumPy arrays of ``dtypes`` (the elements' dtypes): a leaf
    in its carrier dtype taken back; any other dtype left as torch returned it, for the
    judge to report."""
    leaves = tuple(out) if isinstance(out, tuple | list) else (out,)
    back = []
    for t, d in zip(leaves, dtypes):
        v = t.detach().cpu().numpy()
        back.append(_carried(v, np.dtype(d)) if v.dtype == carrier_dtype(monoid, d) else v)
    return tuple(back) + tuple(t.detach().cpu().numpy() for t in leaves[len(dtypes):])


def _compile_limits() -> None:
    """Room for every probe's graph: each (combine, axis, rank, dtypes) is one more compiled
    entry of one function, past torch's default of 8; and past the limit an error, never
    the silent eager fallback (which would check torch's generic path under this name)."""
    import torch._dynamo.config as cfg

    # The names of torch 2.13 (older releases lack some: each set only where it exists).
    for name, value in (("recompile_limit", 128), ("cache_size_limit", 128),
                        ("accumulated_recompile_limit", 1024),
                        ("accumulated_cache_size_limit", 1024)):
        if hasattr(cfg, name):
            setattr(cfg, name, max(getattr(cfg, name), value))
    if hasattr(cfg, "fail_on_recompile_limit_hit"):
        cfg.fail_on_recompile_limit_hit = True


def torch_associative(mode: str, reverse: bool, device: str) -> Callable[..., Leaves]:
    """torch's ``associative_scan`` of the combine along an axis, in ``mode`` ("generic":
    eager; "pointwise": under ``torch.compile``, one compiled function per combine and axis,
    n dynamic),
    on ``device`` tensors, ``reverse`` as torch defines it."""
    def compile_scan(combine: Callable, axis: int) -> Any:
        import torch
        from torch._higher_order_ops.associative_scan import associative_scan

        _compile_limits()
        fn = tupled(combine)

        def scan(xs: Any) -> Any:
            return associative_scan(fn, xs, axis, reverse=reverse, combine_mode="pointwise")

        # dynamic: one graph for every n (but 1), where each new n would compile anew until
        # torch marked n dynamic itself.
        return torch.compile(scan, fullgraph=True, dynamic=True)

    compiled = PerCombine(compile_scan)

    def run(elems: Leaves, combine: Callable, axis: int = 0) -> Leaves:
        from torch._higher_order_ops.associative_scan import associative_scan

        monoid = getattr(combine, "monoid", None)
        xs = to_torch(monoid, elems, device)
        if mode == "generic":
            out = associative_scan(tupled(combine), xs, axis, reverse=reverse,
                                   combine_mode="generic")
        else:
            out = compiled(combine, axis)(xs)
        return from_torch(monoid, out, tuple(v.dtype for v in elems))

    return run


def flag_combine(a: tuple[Any, Any], b: tuple[Any, Any]) -> tuple[Any, Any]:
    """The segmented sum's pair operator on (head flag, value) tensors, ``a`` earlier: a head
    in ``b`` (a nonzero flag) restarts the sum at its value; the flags or-ed.  Pointwise
    torch ops alone."""
    import torch

    return (a[0] | b[0], torch.where(b[0] != 0, b[1], a[1] + b[1]))


def torch_segmented(mode: str, device: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The inclusive segmented sum of a 1-D array with head flags, as torch's
    ``associative_scan`` of (flag, value) pairs with :func:`flag_combine` (``mode`` as in
    :func:`torch_associative`; flag 0 is set, element 0 starting a segment whatever its
    flag)."""
    compiled: list[Any] = []

    def run(x: np.ndarray, flags: np.ndarray) -> np.ndarray:
        import torch
        from torch._higher_order_ops.associative_scan import associative_scan

        if x.shape[0] == 0:
            return x.copy()  # torch refuses an empty scan dimension
        # int32 flags, as segmented kernels hold them: Inductor's pointwise scan (torch 2.11)
        # failed to compile a bool leaf.
        f = torch.from_numpy(np.asarray(flags, dtype=bool).astype(np.int32)).to(device)
        f[0] = 1
        v = torch.from_numpy(np.ascontiguousarray(x).copy()).to(device)
        if mode == "generic":
            out = associative_scan(flag_combine, (f, v), 0, combine_mode="generic")
        else:
            if not compiled:
                _compile_limits()
                compiled.append(torch.compile(
                    lambda p: associative_scan(flag_combine, p, 0, combine_mode="pointwise"),
                    fullgraph=True, dynamic=True))
            out = compiled[0]((f, v))
        return out[1].cpu().numpy()

    return run


#: The block of the segmented Blelloch kernel and its model (one block scans 2 * BLOCK).
SEGMENTED_BLOCK = 256


def head_pairs(xp: Any, x: Any, flags: Any) -> Any:
    """The (flag, value) pairs the segmented kernel scans, shape (n, 2) in x's dtype, in the
    array module ``xp`` (NumPy or CuPy)."""
    return xp.stack([xp.asarray(flags, dtype=bool).astype(x.dtype), x], axis=1)


def segment_exclusive(xp: Any, scanned: Any, flags: Any) -> Any:
    """The exclusive segmented sum from the exclusive scan of (flag, value) pairs: its value
    at every position, except a segment's head, where the scan holds the previous segment's
    total and a segmented scan starts from zero (element 0 is zero either way)."""
    vals = scanned[:, 1]
    return xp.where(xp.asarray(flags, dtype=bool), xp.zeros_like(vals), vals)


def blelloch_segmented(on_gpu: bool, block: int = SEGMENTED_BLOCK
                       ) -> Callable[[Any, Any], Any]:
    """``kernels/blelloch.cu`` scanning (flag, value) pairs with ``segmented_add`` (on the GPU
    with CuPy arrays), or its CPU model doing the same combines in the same order (NumPy):
    the exclusive segmented sum over head flags."""
    def run(x: Any, flags: Any) -> Any:
        if on_gpu:
            import cupy as xp

            from ..kernels.launch import scan

            return segment_exclusive(xp, scan(head_pairs(xp, x, flags), "blelloch",
                                              "segmented_add", block), flags)
        from ..kernels.registry import get_variant

        pairs = head_pairs(np, x, flags)
        net = get_variant("blelloch").build_model(x.shape[0], block)
        return segment_exclusive(np, net.run(pairs, "segmented_add"), flags)

    return run


def gpu_targets(not_installed: Callable[[str], str | None], no_gpu: Callable[[], str | None]
                ) -> list[Target]:
    """The built-in targets of this module, available or not (``not_installed(module)`` and
    ``no_gpu()`` say why one cannot run here)."""
    torch = not_installed("torch")
    # As the other torch CUDA targets: torch installed and a GPU found (torch itself is not
    # imported to ask: every process that lists the targets would pay for it).
    cuda = torch or no_gpu()
    out = []
    # torch refuses an empty scan dimension.  Compiled: a graph per combine, dtypes, axis and
    # rank (n is dynamic), so 1-D alone; eager: any axis.
    for mode, device, missing in (("generic", "cpu", torch), ("generic", "cuda", cuda),
                                  ("pointwise", "cuda", cuda)):
        where = "CPU" if device == "cpu" else "CUDA"
        how = "generic" if mode == "generic" else "pointwise, compiled"
        axis = "arg" if mode == "generic" else None
        for reverse in (False, True):
            name = f"torch associative_scan ({how}, {where}{', reverse' if reverse else ''})"
            spec = TargetSpec(combine=True, axis=axis, allows_empty=False, max_n=2**12,
                              reverse="flip" if reverse else False)
            out.append(builtin(name, torch_associative(mode, reverse, device), spec, missing))
        out.append(builtin(f"torch associative_scan segmented (flags, {how}, {where})",
                           torch_segmented(mode, device),
                           TargetSpec(segments="flags", dtypes=KERNEL_DTYPES, max_n=2**14),
                           missing))
    # One block of the Blelloch kernel: 2 * SEGMENTED_BLOCK elements at most.
    cap = 2 * SEGMENTED_BLOCK
    out += [
        builtin("scancheck:blelloch (segmented)", blelloch_segmented(True),
                TargetSpec(segments="flags", inclusive=False, dtypes=KERNEL_DTYPES,
                           device="gpu", max_n=cap, allows_empty=False), no_gpu()),
        builtin("model:blelloch (segmented)", blelloch_segmented(False),
                TargetSpec(segments="flags", inclusive=False, dtypes=KERNEL_DTYPES, max_n=cap,
                           allows_empty=False)),
    ]
    # fla imports einops and Triton: each missing one is a reason of its own.
    fla = (not_installed("fla") or not_installed("einops") or not_installed("triton") or cuda)
    # cuda.compute compiles a Python operator with numba-cuda (its package numba_cuda); the
    # namespace package cuda is asked first (a dotted name's parent must exist to be asked).
    cccl = ((not_installed("cuda") and "cuda.compute is not installed (pip: cuda-cccl)")
            or not_installed("cuda.compute") or not_installed("numba_cuda") or no_gpu())
    return out + fla_targets(fla) + cccl_targets(cccl)

