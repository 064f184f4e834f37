"""scancheck's own scans as built-in targets: every kernel (``scancheck:VARIANT``) and its CPU
model (``model:VARIANT``), the models' combine networks over tuples under any combine
(``model:VARIANT (generic)``), the NumPy networks that take a combine (``sequential``,
``brent_kung``, ``blelloch``), and ``kernels/blelloch.cu``'s head-flag segmented sum beside
its model, which it must equal bit for bit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.dtypes import KERNEL_DTYPES
from ..kernels.generic_scans import Leaves, blelloch, brent_kung, network_scan, sequential
from ..targets.kernel_targets import kernel_target, model_target
from ..targets.spec import TargetSpec
from ..targets.target import Target
from .rows import Row

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


def model_generic(variant: str, block: int = 64) -> Row:
    """A kernel's CPU model as a target that takes the combine: its network over tuples."""
    from ..kernels.registry import get_variant

    var = get_variant(variant)
    cap = var.capacity(block, var.resolve_params(None)) if var.capacity else None

    def run(elems: Leaves, combine: Callable) -> Leaves:
        return network_scan(var.build_model(elems[0].shape[0], block), elems, combine)

    spec = TargetSpec(combine=True, inclusive=var.inclusive, max_n=cap, allows_empty=False)
    return Row(f"model:{variant} (generic)", run, spec, api="scancheck model (generic)",
               mode=(("variant", variant),))


def _of(target: Target, gpu: bool) -> Row:
    return Row(target.name, target.fn, target.spec, gpu=gpu,
               api="scancheck kernel" if gpu else "scancheck model")


def _rows() -> list[Row]:
    from ..kernels.registry import VARIANTS

    out = []
    for name, var in VARIANTS.items():
        if var.racy or "add" not in var.operators:
            continue
        out += [_of(kernel_target(name), True), _of(model_target(name), False)]
    cap = 2 * SEGMENTED_BLOCK  # one block of the Blelloch kernel
    segmented = TargetSpec(segments="flags", inclusive=False, dtypes=KERNEL_DTYPES, max_n=cap,
                           allows_empty=False)
    out += [
        Row("scancheck:blelloch (segmented)", blelloch_segmented(True),
            replace(segmented, device="gpu"), gpu=True,
            api="scancheck kernel (segmented)"),
        Row("model:blelloch (segmented)", blelloch_segmented(False), segmented,
            api="scancheck model (segmented)"),
        Row("sequential (generic)", sequential, TargetSpec(combine=True, axis="arg"),
            api="scancheck network (generic)"),
        Row("brent_kung (generic)", brent_kung, TargetSpec(combine=True, axis="arg"),
            api="scancheck network (generic)"),
        Row("blelloch (generic)", blelloch, TargetSpec(combine=True, inclusive=False, axis="arg"),
            api="scancheck network (generic)"),
        # Every kernel's schedule under the probes: the CPU models' networks over tuples.
        *(model_generic(name) for name, var in VARIANTS.items() if not var.racy),
    ]
    return out


ROWS: tuple[Row, ...] = tuple(_rows())

KNOWN: tuple = ()
