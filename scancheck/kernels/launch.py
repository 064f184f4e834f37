"""The CuPy loader of the reference kernels: validate a launch, compile once, run.

:func:`scan` validates a launch against the variant's row and the device *before*
anything runs, compiles once per process (and once per machine, through CuPy's kernel
cache), and returns the device result.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from ..core.cuda import (
    NVRTC_OPTIONS,
    LaunchError,
    allow_shared_memory,
    device_smem_limit,
    expand_source,
    thread_limit,
)
from ..core.operators import Operator, get_operator
from .registry import VARIANTS, Launch, Variant, get_variant, instantiations


@functools.cache
def _module(variant_name: str, params: tuple[tuple[str, int], ...], device: int,
            names: tuple[str, ...] | None = None) -> Any:
    """One NVRTC compile per variant and parameter set, holding every dtype and operator (or
    only the instantiations ``names``)."""
    import cupy as cp

    variant = VARIANTS[variant_name]
    if names is None and not variant.fixed_entry:
        names = tuple(instantiations(variant, dict(params)))
    return cp.RawModule(code=expand_source(variant.source), options=NVRTC_OPTIONS,
                        name_expressions=None if variant.fixed_entry else list(names))


def compiled_kernels(variant: Variant, dtype: str, op: str | Operator,
                     params: dict[str, int], narrow: bool = False) -> dict[str, Any]:
    """The compiled entry points of one instantiation, keyed by entry name.  ``narrow``
    compiles a module of this instantiation alone: the same source and options, so the same
    code, in a fraction of the time (the look-back's whole module, 27 instantiations, took
    nvcc for sm_90 3.7 s at 8 items and 21 s at 64; its four add ones at 64 items, one
    module each, 3.5 s in all), for a tuning run's many launch shapes.  Params other than
    the defaults always compile narrow: only tuning, ``verify``, ``bench`` and a tuned
    launch run there, each in one dtype and operator at a time."""
    import cupy as cp

    narrow = narrow or variant.template_key(params) != variant.template_key(None)
    names = {e: variant.name_expression(e, dtype, op, params) for e in variant.entries}
    only = tuple(sorted(set(names.values()))) if narrow and not variant.fixed_entry else None
    mod = _module(variant.name, variant.template_key(params), cp.cuda.Device().id, only)
    return {e: mod.get_function(name) for e, name in names.items()}


def warm(variant: str | Variant, params: dict[str, int] | None = None) -> None:
    """Compile ``variant`` at ``params`` (default: its defaults) into CuPy's kernel cache on
    disk, so that every later process on this machine loads it instead of compiling it: the
    whole module at the defaults, the first operator's instantiation for each of its dtypes
    elsewhere (the ones a candidate launch runs)."""
    var = get_variant(variant)
    op = get_operator(var.operators[0])
    resolved = var.resolve_params(params)
    dtypes = [d for d in var.dtypes if d in op.dtypes]
    if var.template_key(resolved) == var.template_key(None):
        dtypes = dtypes[:1]
    for dtype in dtypes:
        compiled_kernels(var, dtype, op, resolved)


def warm_jobs() -> list[tuple[str, dict[str, int] | None]]:
    """Every module a GPU run compiles: each variant at its defaults, and at each other
    parameter set among its tuning candidates (``verify`` runs them all)."""
    jobs: list[tuple[str, dict[str, int] | None]] = [(name, None) for name in VARIANTS]
    for name, var in VARIANTS.items():
        sets = {var.template_key(p) for _, p in var.candidates}
        sets.discard(var.template_key(None))
        jobs += [(name, dict(s)) for s in sorted(sets)]
    return jobs


def plan(
    x: Any,
    variant: str | Variant,
    op: str | Operator = "add",
    block: int = 256,
    params: dict[str, int] | None = None,
    out: Any = None,
    narrow: bool = False,
) -> Launch:
    """A validated, compiled launch of ``variant`` on ``x``; call it to run the scan.

    The launch is checked against the variant's row and the device first; a refused
    launch raises :class:`LaunchError` and leaves the process able to launch again.
    ``narrow``: compile this instantiation alone (:func:`compiled_kernels`).
    """
    var = get_variant(variant)
    oper = get_operator(op)
    oper.check_elements(x)
    n = int(x.shape[0])
    # Every limit but the device's shared memory first: a launch refused is told so where
    # no CuPy or GPU is there to run it.
    var.check(n, block, x.dtype.name, oper, params, smem_limit=sys.maxsize)
    try:
        import cupy as cp
    except ImportError:
        raise ModuleNotFoundError(
            f"{var.name} is a CUDA kernel and runs through CuPy, which is not installed: pip "
            f"install 'scancheck[cuda12]' (or cuda13 for a CUDA 13 driver)", name="cupy"
        ) from None
    resolved = var.check(n, block, x.dtype.name, oper, params, smem_limit=device_smem_limit())
    xd = cp.ascontiguousarray(cp.asarray(x))
    out = cp.empty_like(xd) if out is None else out
    kernels = compiled_kernels(var, xd.dtype.name, oper, resolved, narrow)
    smem = var.smem(block, xd.itemsize * oper.width, resolved)
    for entry, k in kernels.items():
        allow_shared_memory(k, smem)
        if block > (limit := thread_limit(k)):
            raise LaunchError(f"block={block} is over the {limit} threads a block of {entry} may "
                              f"have at {resolved} (its registers); allowed: up to {limit}")
    return Launch(var, kernels, xd, out, n, block, resolved, smem)


def scan(
    x: Any,
    variant: str | Variant,
    op: str | Operator = "add",
    block: int = 256,
    params: dict[str, int] | None = None,
) -> Any:
    """Run ``variant``'s kernel on ``x`` (NumPy or CuPy) and return the scan as a CuPy array."""
    return plan(x, variant, op, block, params)()
