"""scancheck's own kernels and their CPU models as targets (``kernel:VARIANT[:BLOCK[:OP]]``
and ``model:VARIANT[:BLOCK[:OP]]``), each with the spec its variant declares."""

from __future__ import annotations

from typing import Any

from ..core.operators import get_operator
from .spec import TargetSpec
from .target import Target, no_gpu

#: The blocks a kernel and a model launch at where the locator names none.
KERNEL_BLOCK, MODEL_BLOCK = 256, 64


def _variant_dtypes(var: Any, op: str) -> tuple[str, ...]:
    return tuple(d for d in var.dtypes if d in get_operator(op).dtypes)


def _named(base: str, block: int, default_block: int, op: str) -> str:
    """``base`` with the block and operator where they are not the defaults, so that two
    launches of one kernel checked together keep apart in a summary and its JSON."""
    told = ([f"block {block}"] if block != default_block else []) + ([op] if op != "add" else [])
    return base + (f" ({', '.join(told)})" if told else "")


def kernel_target(variant: str, block: int = KERNEL_BLOCK, op: str = "add") -> Target:
    """One of scancheck's kernels as a target (grid-scope variants take any n)."""
    from ..kernels.launch import scan
    from ..kernels.registry import get_variant

    var = get_variant(variant)
    var.check_block_and_operator(block, op)  # a usage error now, not a fault at the first call
    cap = var.capacity(block, var.resolve_params(None)) if var.capacity else None
    # The launcher refuses an empty input with a LaunchError (no grid has zero blocks).
    spec = TargetSpec(op=op, inclusive=var.inclusive, dtypes=_variant_dtypes(var, op),
                      deterministic=var.deterministic, device="gpu", max_n=cap, allows_empty=False)
    return Target(_named(f"scancheck:{variant}", block, KERNEL_BLOCK, op),
                  lambda x: scan(x, variant, op, block), spec, no_gpu(),
                  locator=f"kernel:{variant}:{block}:{op}")


def model_target(variant: str, block: int = MODEL_BLOCK, op: str = "add") -> Target:
    """A kernel's CPU model as a target: what the kernel must compute, checked without a GPU."""
    from ..kernels.registry import get_variant

    var = get_variant(variant)
    # Held to its kernel's launches: a model at a block size its kernel refuses (Blelloch's
    # tree at 100 threads) computes no scan of it, and would be called wrong.
    var.check_block_and_operator(block, op)
    cap = var.capacity(block, var.resolve_params(None)) if var.capacity else 20_000
    spec = TargetSpec(op=op, inclusive=var.inclusive, dtypes=_variant_dtypes(var, op), max_n=cap,
                      allows_empty=False)
    return Target(_named(f"model:{variant}", block, MODEL_BLOCK, op),
                  lambda x: var.build_model(x.shape[0], block).run(x, op),
                  spec, locator=f"model:{variant}:{block}:{op}")
