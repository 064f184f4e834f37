"""The built-in targets: the scans of NumPy, CuPy, PyTorch, JAX and the Python standard
library (pandas, polars, pyarrow and numba in :mod:`.library_frames`), and scancheck's own
kernels and their CPU models, each with its documented spec.

A library that is not installed (or a GPU that is not there) leaves its targets listed
but unavailable, saying why.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib.util
import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.devices import gpu_available
from ..core.dtypes import DTYPES, INPUT_DTYPES, KERNEL_DTYPES
from ..core.operators import get_operator
from .generic_scans import generic_targets
from .gpu_scans import gpu_targets
from .library_frames import frame_targets
from .library_segments import segment_targets
from .spec import TargetSpec
from .targets import Target, builtin


def not_installed(module: str) -> str | None:
    """Why a target needing ``module`` cannot run here, or None where it is installed."""
    return None if importlib.util.find_spec(module) else f"{module} is not installed"


def no_gpu() -> str | None:
    """Why a GPU target cannot run here, or None where a GPU and CuPy are found."""
    ok, why = gpu_available()
    return None if ok else why


def _cupy_cumsum(accelerators: list[str], keep_dtype: bool = True) -> Callable[..., Any]:
    """cupy.cumsum with these routine accelerators: over the whole of a 1-D array (CUB's
    device-wide scan, where "cub" is on), or along an axis of an N-D one (CuPy's own kernel
    either way); in the input's dtype where ``keep_dtype``, else in CuPy's default."""
    def run(x: Any, axis: int | None = None) -> Any:
        import cupy as cp
        from cupy._core import _accelerator

        saved = _accelerator.get_routine_accelerators()
        _accelerator.set_routine_accelerators(accelerators)
        try:
            # A 1-D array goes whole (axis=None): CuPy's path for it, CUB's where it is on.
            return cp.cumsum(x, axis=None if x.ndim == 1 else axis,
                             dtype=x.dtype if keep_dtype else None)
        finally:
            _accelerator.set_routine_accelerators(saved)

    return run


def _torch_op(name: str, cuda: bool, keep_dtype: bool = True) -> Callable[..., Any]:
    """torch.<name> (cumsum, cumprod, logcumsumexp, cummax, cummin) over a dim, in the input's
    dtype (cumsum and cumprod in torch's default where not ``keep_dtype``): on CPU tensors
    sharing the NumPy array's memory and strides (bfloat16 through its bits), or on CUDA
    tensors sharing the CuPy array's (DLPack both ways, no copy: checks past 2**32 elements
    stay on the GPU)."""
    def call(t: Any, axis: int) -> Any:
        import torch

        fn = getattr(torch, name)
        if name in ("cummax", "cummin"):
            return tuple(fn(t, axis))
        keep = keep_dtype and name != "logcumsumexp"
        return fn(t, axis, dtype=t.dtype) if keep else fn(t, axis)

    def outputs(out: Any, back: Callable[[Any], Any]) -> Any:
        return tuple(back(v) for v in out) if isinstance(out, tuple) else back(out)

    if cuda:
        def run_cuda(x: Any, axis: int = 0) -> Any:
            import cupy as cp
            import torch

            if isinstance(x, cp.ndarray) and any(st < 0 for st in x.strides):
                # torch holds no negative strides, and aborts the process on the strides
                # CuPy 14.2 exports for them (measured on an H100, docs/findings.md).
                x = x.copy()
            # bfloat16 comes and goes as a torch tensor: CuPy has no such dtype.
            return outputs(call(torch.from_dlpack(x), axis), lambda v: v if v.dtype ==
                           torch.bfloat16 else cp.from_dlpack(v))

        return run_cuda

    def run_cpu(x: np.ndarray, axis: int = 0) -> Any:
        import torch

        if any(s < 0 for s in x.strides):
            x = x.copy()  # torch takes no negative strides
        if x.dtype.name == "bfloat16":
            t = torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
            return outputs(call(t, axis), lambda v: v.view(torch.int16).numpy().view(x.dtype)
                           if v.dtype == torch.bfloat16 else v.numpy())
        return outputs(call(torch.from_numpy(x), axis), lambda v: v.numpy())

    return run_cpu


def _cupy_op(name: str) -> Callable[[Any, int], Any]:
    """cupy.<name> over the whole of a 1-D array (axis=None, as it is mostly called), or
    along an axis of an N-D one."""
    def run(x: Any, axis: int = 0) -> Any:
        import cupy as cp

        return getattr(cp, name)(x, axis=None if x.ndim == 1 else axis, dtype=x.dtype)

    return run


def _jax() -> Any:
    # JAX takes 75% of GPU memory on first use unless told otherwise; conformance checks
    # run side by side on one GPU (check --jobs, pytest -n), and the others then fault
    # with out-of-memory.  A setting the user made wins.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax.numpy

    return jax


def _x64(jax: Any, on: bool) -> Any:
    """A context in which JAX has 64-bit types (``on``), or one that changes nothing."""
    if not on:
        return contextlib.nullcontext()
    # jax.enable_x64 since JAX 0.8 (a config State, whose truth value raises); before it,
    # jax.experimental's.
    ctx = jax.enable_x64 if hasattr(jax, "enable_x64") else jax.experimental.enable_x64
    return ctx(True)


def _jax_numpy(name: str, x64: bool, keep_dtype: bool = True
               ) -> Callable[[np.ndarray, int], np.ndarray]:
    """jax.numpy.<name> (cumsum, cumprod) over an axis in the input's dtype (JAX's default
    where not ``keep_dtype``), with 64-bit types on where ``x64`` (jax_enable_x64, for this
    call only)."""
    def run(x: np.ndarray, axis: int) -> np.ndarray:
        jax = _jax()
        with _x64(jax, x64):
            fn = getattr(jax.numpy, name)
            return np.asarray(fn(jax.numpy.asarray(x), axis=axis,
                                 dtype=x.dtype if keep_dtype else None))

    return run


def _jax_associative_scan(x64: bool) -> Callable[[np.ndarray], np.ndarray]:
    """jax.lax.associative_scan of add, called eagerly, with 64-bit types on where ``x64``.
    Not under jax.jit: in the GPU suite on an H100 its slowest test took 55 s jitted, 29 s
    eager (2026-11-25; 37 s jitted 2026-11-26), though jitted was three times faster on a
    2-core CPU, and alone on an H200 one jitted program per length compiled faster."""
    def run(x: np.ndarray) -> np.ndarray:
        jax = _jax()
        with _x64(jax, x64):
            return np.asarray(jax.lax.associative_scan(jax.numpy.add, jax.numpy.asarray(x)))

    return run


def _jax_lax_scan(op: str) -> Callable[..., np.ndarray]:
    """jax.lax.scan carrying a running sum or product from ``initial``: each step emits the
    carry it was given, an exclusive scan with an initial value."""
    def run(x: np.ndarray, initial: Any) -> np.ndarray:
        jax = _jax()
        jnp = jax.numpy
        combine = jnp.add if op == "add" else jnp.multiply
        _, ys = jax.lax.scan(lambda c, v: (combine(c, v), c), jnp.asarray(initial, x.dtype),
                             jnp.asarray(x))
        return np.asarray(ys)

    return run


def _accumulate(op: str) -> Callable[..., np.ndarray]:
    """Python's itertools.accumulate from ``initial`` over NumPy scalars (each step rounded to
    the dtype, integers wrapping), its last output dropped: an exclusive scan."""
    import itertools
    import operator

    combine = {"add": operator.add, "mul": operator.mul}[op]

    def run(x: np.ndarray, initial: Any) -> np.ndarray:
        steps = itertools.accumulate(x, combine, initial=x.dtype.type(initial))
        return np.fromiter(steps, x.dtype, x.shape[0] + 1)[:-1]

    return run


_TORCH_HALVES = ("float16", "bfloat16")
#: torch scans beyond cumsum: (function, operator, dtypes, further spec).  torch 2.13 has no
#: CPU cumsum or cumprod for uint16, uint32 or uint64.
_TORCH_SCANS: tuple[tuple[str, str, tuple[str, ...], dict[str, Any]], ...] = (
    ("cumprod", "mul", (*KERNEL_DTYPES, *_TORCH_HALVES, "int8", "int16", "uint8"), {}),
    ("logcumsumexp", "logaddexp", ("float32", "float64", *_TORCH_HALVES), {}),
    ("cummax", "max", (*KERNEL_DTYPES, *_TORCH_HALVES, "int8", "int16", "uint8", "bool"),
     {"indices": True}),
    ("cummin", "min", (*KERNEL_DTYPES, *_TORCH_HALVES, "int8", "int16", "uint8", "bool"),
     {"indices": True}),
)
_JAX_SPEC = TargetSpec(dtypes=("float32", "int32", "float16", "bfloat16", "int8", "int16", "uint8",
                               "uint16", "uint32"), subnormals="flush")
_JAX_X64 = ("float64", "int64", "uint64")
#: CuPy has no bfloat16.
_CUPY_DTYPES = tuple(d for d in DTYPES if d != "bfloat16")
#: What library sums and products return for bool and narrow integer input when called
#: without dtype=, as most code calls them: widened, the scan taken in the wider type
#: (measured: NumPy 2.4, torch 2.13 and JAX 0.10 on a CPU, torch 2.11 and CuPy 14.2 on an
#: H100, where CuPy follows NumPy's rule).
_PROMOTED = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32")
_NUMPY_PROMOTE = tuple((d, "uint64" if d.startswith("u") else "int64") for d in _PROMOTED)
_TORCH_PROMOTE = tuple((d, "int64") for d in (*_PROMOTED, "uint64"))
#: JAX widens bool alone, to its default integer (int32 unless jax_enable_x64 is set).
_JAX_PROMOTE = (("bool", "int32"),)


def _variant_dtypes(var: Any, op: str) -> tuple[str, ...]:
    return tuple(d for d in var.dtypes if d in get_operator(op).dtypes)


def kernel_target(variant: str, block: int = 256, op: str = "add") -> Target:
    """One of scancheck's kernels as a target (grid-scope variants take any n)."""
    from ..kernels.launch import scan
    from ..kernels.registry import get_variant

    var = get_variant(variant)
    var.check_block_and_operator(block, op)  # a usage error now, not a fault at the first call
    cap = var.capacity(block, var.resolve_params(None)) if var.capacity else None
    # The launcher refuses an empty input with a LaunchError (no grid has zero blocks).
    spec = TargetSpec(op=op, inclusive=var.inclusive, dtypes=_variant_dtypes(var, op),
                      deterministic=var.deterministic, device="gpu", max_n=cap, allows_empty=False)
    # Named by its operator too where that is not add: a report lists several of one kernel.
    name = f"scancheck:{variant}" + (f" ({op})" if op != "add" else "")
    return Target(name, lambda x: scan(x, variant, op, block), spec,
                  no_gpu(), locator=f"kernel:{variant}:{block}:{op}")


def model_target(variant: str, block: int = 64, op: str = "add") -> Target:
    """A kernel's CPU model as a target: what the kernel must compute, checked without a GPU."""
    from ..kernels.registry import get_variant

    var = get_variant(variant)
    # Held to its kernel's launches: a model at a block size its kernel refuses (Blelloch's
    # tree at 100 threads) computes no scan of it, and would be called wrong.
    var.check_block_and_operator(block, op)
    cap = var.capacity(block, var.resolve_params(None)) if var.capacity else 20_000
    spec = TargetSpec(op=op, inclusive=var.inclusive, dtypes=_variant_dtypes(var, op), max_n=cap,
                      allows_empty=False)
    return Target(f"model:{variant}", lambda x: var.build_model(x.shape[0], block).run(x, op),
                  spec, locator=f"model:{variant}:{block}:{op}")


def builtin_targets() -> dict[str, Target]:
    """Every built-in target by name, available or not (see ``Target.unavailable``): copies
    of their own, which a caller may change (a child sets each call's ``watch``)."""
    return {name: copy.copy(t) for name, t in _builtin_table().items()}


@functools.cache
def _builtin_table() -> dict[str, Target]:
    """The built-in targets, built once per process: their specs are validated as they are
    made, and every resolve of a name looks them up (tests resolve hundreds)."""
    from ..kernels.registry import VARIANTS

    # Library scans are called with dtype= the input's: by default NumPy, CuPy and torch
    # promote int32 to int64, which the conformance check would (rightly) report.
    targets = [
        builtin("numpy.cumsum", lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype),
                TargetSpec(dtypes=DTYPES, axis="arg")),
        # Measured on an H100 (2026-11-22): CUB's single-pass scan and torch.cumsum on CUDA
        # return float bits that vary from run to run; declared so, the report still
        # shows what was observed.
        builtin("cupy.cumsum (CUB)", _cupy_cumsum(["cub"]),
                TargetSpec(device="gpu", deterministic=False, dtypes=_CUPY_DTYPES), no_gpu()),
        # Without CUB, CuPy's own scan kernel is compiled with -ftz=true (cupy#9576): float32
        # subnormals read as zero (measured on an H100, docs/findings.md); CUB's does not flush.
        builtin("cupy.cumsum (no CUB)", _cupy_cumsum([]),
                TargetSpec(device="gpu", subnormals="flush", axis="arg", dtypes=_CUPY_DTYPES),
                no_gpu()),
        # torch 2.13 has no CPU cumsum for uint16, uint32 or uint64.
        builtin("torch.cumsum (CPU)", _torch_op("cumsum", cuda=False),
                TargetSpec(dtypes=(*KERNEL_DTYPES, "float16", "bfloat16", "int8", "int16", "uint8"),
                           axis="arg"), not_installed("torch")),
        builtin("torch.cumsum (CUDA)", _torch_op("cumsum", cuda=True),
                TargetSpec(device="gpu", deterministic=False, axis="arg",
                           dtypes=(*KERNEL_DTYPES, *_TORCH_HALVES, "int8", "int16", "uint8")),
                not_installed("torch") or no_gpu()),
        # JAX computes in 32 bits unless jax_enable_x64 is set: the 32-bit targets declare
        # only those, the x64 ones turn it on for their call.  On
        # CPUs XLA reads subnormals as zero by design (DAZ and FTZ; jax 0.10.2 returns zeros
        # for the scan of [2**-126 - 2**-149, 2**-149]): declared, not a finding.
        builtin("jax.numpy.cumsum", _jax_numpy("cumsum", False), replace(_JAX_SPEC, axis="arg"),
                not_installed("jax")),
        builtin("jax.numpy.cumprod", _jax_numpy("cumprod", False),
                replace(_JAX_SPEC, op="mul", axis="arg"), not_installed("jax")),
        builtin("jax.lax.associative_scan", _jax_associative_scan(False), _JAX_SPEC,
                not_installed("jax")),
        # With jax_enable_x64 on (for the call only): the 64-bit types.
        builtin("jax.numpy.cumsum (x64)", _jax_numpy("cumsum", True),
                replace(_JAX_SPEC, dtypes=_JAX_X64, axis="arg"), not_installed("jax")),
        builtin("jax.numpy.cumprod (x64)", _jax_numpy("cumprod", True),
                replace(_JAX_SPEC, op="mul", dtypes=_JAX_X64, axis="arg"), not_installed("jax")),
        builtin("jax.lax.associative_scan (x64)", _jax_associative_scan(True),
                replace(_JAX_SPEC, dtypes=_JAX_X64), not_installed("jax")),
        # Scans from an initial value (exclusive): Python's own, and JAX's carry scan.
        builtin("itertools.accumulate(initial=)", _accumulate("add"),
                TargetSpec(inclusive=False, initial=True)),
        builtin("itertools.accumulate(operator.mul, initial=)", _accumulate("mul"),
                TargetSpec(op="mul", inclusive=False, initial=True)),
        # lax.scan is a sequential loop, compiled anew for every length: checked to 2**12.
        builtin("jax.lax.scan (add, initial)", _jax_lax_scan("add"),
                replace(_JAX_SPEC, inclusive=False, initial=True, max_n=2**12), not_installed("jax")),
        builtin("jax.lax.scan (mul, initial)", _jax_lax_scan("mul"),
                replace(_JAX_SPEC, op="mul", inclusive=False, initial=True, max_n=2**12),
                not_installed("jax")),
        builtin("numpy.cumprod", lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype),
                TargetSpec(op="mul", dtypes=DTYPES, axis="arg")),
        # Called without dtype=: bool and narrow integers come back widened.
        builtin("numpy.cumsum (default dtype)", lambda x, axis: np.cumsum(x, axis=axis),
                TargetSpec(dtypes=_PROMOTED, promote=_NUMPY_PROMOTE, axis="arg")),
        builtin("numpy.cumprod (default dtype)", lambda x, axis: np.cumprod(x, axis=axis),
                TargetSpec(op="mul", dtypes=_PROMOTED, promote=_NUMPY_PROMOTE, axis="arg")),
        builtin("cupy.cumsum (default dtype)", _cupy_cumsum([], keep_dtype=False),
                TargetSpec(device="gpu", dtypes=_PROMOTED, promote=_NUMPY_PROMOTE,
                           axis="arg"), no_gpu()),
        builtin("torch.cumsum (CPU, default dtype)", _torch_op("cumsum", False, False),
                TargetSpec(dtypes=(*_PROMOTED, "uint64"), promote=_TORCH_PROMOTE,
                           axis="arg"), not_installed("torch")),
        builtin("torch.cumprod (CPU, default dtype)", _torch_op("cumprod", False, False),
                TargetSpec(op="mul", dtypes=(*_PROMOTED, "uint64"), promote=_TORCH_PROMOTE,
                           axis="arg"), not_installed("torch")),
        builtin("torch.cumsum (CUDA, default dtype)", _torch_op("cumsum", True, False),
                TargetSpec(device="gpu", dtypes=(*_PROMOTED, "uint64"), promote=_TORCH_PROMOTE,
                           axis="arg"), not_installed("torch") or no_gpu()),
        builtin("jax.numpy.cumsum (default dtype)", _jax_numpy("cumsum", False, False),
                replace(_JAX_SPEC, dtypes=_PROMOTED, promote=_JAX_PROMOTE, axis="arg"),
                not_installed("jax")),
        # Running maxima and minima, of booleans too (a running or and a running and).
        builtin("numpy.maximum.accumulate", lambda x, axis: np.maximum.accumulate(x, axis),
                TargetSpec(op="max", dtypes=INPUT_DTYPES, axis="arg")),
        builtin("numpy.minimum.accumulate", lambda x, axis: np.minimum.accumulate(x, axis),
                TargetSpec(op="min", dtypes=INPUT_DTYPES, axis="arg")),
        builtin("numpy.logaddexp.accumulate", lambda x, axis: np.logaddexp.accumulate(x, axis),
                TargetSpec(op="logaddexp", dtypes=("float32", "float64", "float16"),
                           axis="arg")),
        # Along an axis of an N-D array CuPy runs its own scan kernel, compiled with -ftz=true:
        # float32 subnormal products read as zero (H100, 2026-11-25: a row of dyadic factors
        # whose exact product is subnormal was judged flushed; -ftz never touches float64).
        # A 1-D array goes to CUB's single-pass scan, whose float bits vary from run to run
        # as its cumsum's do (H100, 2026-11-27: 48 distinct outputs of 50 runs of one input of
        # 41,027 elements, 1 without CUB; docs/findings.md).
        builtin("cupy.cumprod", _cupy_op("cumprod"),
                TargetSpec(op="mul", device="gpu", axis="arg", dtypes=_CUPY_DTYPES,
                           subnormals="flush:float32", deterministic=False),
                no_gpu()),
    ]
    torch_gpu = not_installed("torch") or no_gpu()
    for name, op, dtypes, extra in _TORCH_SCANS:
        for device, missing in (("cpu", not_installed("torch")), ("gpu", torch_gpu)):
            # On CUDA, cumsum's bits vary from run to run (measured on an H100, 2026-11-22).
            spec = TargetSpec(op=op, dtypes=dtypes, device=device, axis="arg",
                              deterministic=device == "cpu", **extra)
            targets.append(builtin(f"torch.{name} ({'CPU' if device == 'cpu' else 'CUDA'})",
                                   _torch_op(name, device == "gpu"), spec, missing))
    targets += segment_targets(not_installed)
    targets += frame_targets(not_installed)
    for name, var in VARIANTS.items():
        if var.racy or "add" not in var.operators:
            continue
        targets.append(kernel_target(name))
        targets.append(model_target(name))
    targets += generic_targets(not_installed, _jax, _x64)  # they take the combine: the probes drive them
    targets += gpu_targets(not_installed, no_gpu)  # torch's associative_scan, segmented kernels
    return {t.name: t for t in targets}
