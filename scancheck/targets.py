"""Scan implementations scancheck can check: any callable, an import path, a ``.cu`` file.

A :class:`Target` is a callable taking a 1-D array (NumPy, or CuPy for ``device="gpu"``)
and returning its scan, with a :class:`TargetSpec` that declares what it computes.
Built-in targets (:func:`builtin_targets`) cover NumPy, CuPy (with and without CUB),
PyTorch (CPU and CUDA), JAX, scancheck's own kernels and their CPU models — each only
where its library is installed.  A target is only ever handed copies of its input
(:meth:`Target.run`): what it writes there never reaches the oracle's input, and any write
is an :class:`InputWritten`.

A ``.cu`` target (its local ``#include "..."`` headers are inlined) defines, for the
element type ``T`` (scancheck prepends ``typedef float T;``
or the like for each dtype it checks)::

    extern "C" __global__ void scan(const T* in, T* out, long long n, void* scratch);

and is launched once with ``ceil(n / block)`` blocks of ``block`` threads,
``2 * block * sizeof(T)`` bytes of dynamic shared memory, and ``scratch`` pointing to
``16 * (blocks + 1)`` zeroed bytes (for tile flags and counters of single-pass scans).
``out`` is filled with 0xff bytes first (NaN, or -1), so that an output the kernel never
writes is seen as such, not as whatever correct value the memory pool left there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .operators import (
    CUDA_SCALAR,
    DTYPES,
    INPUT_DTYPES,
    KERNEL_DTYPES,
    as_dtype,
    check_rules,
    get_operator,
    is_float,
)

#: Where a target's arrays live: "cpu", NumPy arrays; "gpu", CuPy arrays.
DEVICES: tuple[str, ...] = ("cpu", "gpu")


@dataclass(frozen=True)
class TargetSpec:
    """What a scan implementation claims to compute."""

    op: str = "add"
    inclusive: bool = True
    dtypes: tuple[str, ...] = KERNEL_DTYPES
    deterministic: bool = True
    #: "cpu": takes and returns NumPy arrays; "gpu": CuPy arrays.
    device: str = "cpu"
    #: Largest n it accepts (None: no limit of its own).
    max_n: int | None = None
    #: Whether it takes an empty input (and must return an empty scan).
    allows_empty: bool = True
    #: Max and min: how equal zeros are ordered (a key of ``operators.ZERO_ORDERS``).
    zeros: str = "either"
    #: Max and min: what a NaN does (a key of ``operators.NAN_RULES``).
    nans: str = "propagate"
    #: Floats: whether subnormals read as zero (a key of ``operators.SUBNORMAL_RULES``; what
    #: "flush" allows for each operator is its ``flush`` column, ``operators.FLUSH_RULES``).
    subnormals: str = "keep"
    #: (input dtype, output dtype) pairs where the scan returns a wider type than it takes,
    #: as NumPy's and PyTorch's default int32 -> int64; the oracle then scans in the wider one.
    promote: tuple[tuple[str, str], ...] = ()
    #: None: the target scans 1-D arrays.  An int: it takes N-D arrays and scans that axis.
    #: "arg": it takes N-D arrays and an axis, and is called as ``fn(x, axis)``.
    axis: int | str | None = None
    #: Whether it scans from the last element to the first (out[k] combines x[k:]).
    reverse: bool = False
    #: Max and min: whether it returns (values, indices) as cummax and cummin do, each index
    #: the last position of its extreme (a NaN's, once one is seen).
    indices: bool = False
    #: Whether it takes an initial value, called as ``fn(x, initial=v)`` with ``v`` a scalar
    #: of x's dtype (CUB's and Thrust's exclusive scan with ``init``): output k combines v
    #: with x[:k] (exclusive) or x[:k+1] (inclusive).
    initial: bool = False

    def __post_init__(self) -> None:
        if not (self.axis is None or self.axis == "arg" or isinstance(self.axis, int)):
            raise ValueError(f"axis={self.axis!r} must be None (1-D), an int (the axis it "
                             f"scans) or 'arg' (it takes the axis as an argument)")
        check_rules(self.zeros, self.nans, self.subnormals)
        for pair in self.promote:
            if len(pair) != 2 or pair[0] not in INPUT_DTYPES or pair[1] not in DTYPES:
                raise ValueError(f"promote={self.promote!r}: each entry must be (input dtype, "
                                 f"output dtype), the input one of {', '.join(INPUT_DTYPES)}, "
                                 f"the output one of {', '.join(DTYPES)}")
            if as_dtype(pair[1]).itemsize < as_dtype(pair[0]).itemsize or (
                    is_float(pair[0]) != is_float(pair[1])):
                raise ValueError(f"promote: {pair[0]} -> {pair[1]} is no promotion: it must "
                                 f"widen, integers (and bool) to integers, floats to floats")
        oper = get_operator(self.op)
        if self.reverse and not oper.commutative:
            raise ValueError(f"reverse=True with op={self.op!r}: a reverse scan of a "
                             f"non-commutative operator is not defined here; use add, max or min")
        if oper.name == "interval":
            raise ValueError("op='interval' is scancheck's proof device, not a target operator")
        if oper.name in ("argmax", "argmin"):
            raise ValueError(f"op={self.op!r} is the monoid scancheck evaluates cummax and cummin "
                             f"in; a target returning indices declares op='{self.op[3:]}' "
                             f"with indices=True")
        if self.indices and (self.op not in ("max", "min") or self.reverse):
            raise ValueError(f"indices=True with op={self.op!r}, reverse={self.reverse}: only "
                             f"forward max and min scans return indices here (cummax, cummin)")
        if self.initial and (self.axis is not None or self.reverse or self.indices):
            raise ValueError(f"initial=True with axis={self.axis!r}, reverse={self.reverse}, "
                             f"indices={self.indices}: an initial value is checked on forward "
                             f"1-D scans without indices (axis=None)")
        unknown = [d for d in self.dtypes if d not in INPUT_DTYPES]
        if unknown:
            raise ValueError(f"dtypes={self.dtypes!r}: {', '.join(map(str, unknown))} "
                             f"unknown; allowed dtypes are {', '.join(INPUT_DTYPES)}")
        if any(d == "bool" and self.output_dtype(d) == "bool" for d in self.dtypes) and (
                "bool" not in oper.dtypes):
            raise ValueError(f"dtypes include bool with op={self.op!r} and no promotion: in "
                             f"bool, + and * are a logical or and and; declare the integer "
                             f"type it returns (promote=(('bool', 'int64'),), as NumPy and "
                             f"torch do), or op='max' or 'min' for a running or or and")
        promotable = oper.width == 1 and "bool" not in oper.dtypes and "int64" in oper.dtypes
        bad = [d for d in self.dtypes if self.output_dtype(d) not in oper.dtypes
               or (d == "bool" and oper.width != 1)]
        if bad or not self.dtypes:
            raise ValueError(f"dtypes={self.dtypes!r} with op={self.op!r}: allowed dtypes are "
                             f"{', '.join(oper.dtypes)}"
                             + (" (and bool, promoted to an integer type)" if promotable else ""))
        if self.device not in DEVICES:
            raise ValueError(f"device={self.device!r} must be one of {', '.join(DEVICES)}")

    def output_dtype(self, dtype: Any) -> str:
        """The dtype the scan returns for input of ``dtype`` (its own, unless promoted)."""
        name = as_dtype(dtype).name
        return dict(self.promote).get(name, name)


def spec_flag(field_name: str) -> str:
    """The command-line flag that sets the :class:`TargetSpec` field ``field_name``: its
    name with dashes, except ``max_n``, which is ``--accepts-max-n`` (``--max-n`` is the
    search's largest n)."""
    return "--accepts-max-n" if field_name == "max_n" else "--" + field_name.replace("_", "-")


def with_overrides(spec: TargetSpec, overrides: dict[str, Any] | None, name: str = "the target"
                   ) -> TargetSpec:
    """``spec`` with just the fields ``overrides`` names replaced (lists read as tuples); a
    ValueError naming the flags and what is allowed where a name is no field or the result
    is no valid spec."""
    if not overrides:
        return spec
    fields = {f.name for f in dataclasses.fields(TargetSpec)}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ValueError(f"{', '.join(unknown)} is no TargetSpec field; allowed: "
                         f"{', '.join(sorted(fields))}")

    def tup(v: Any) -> Any:  # JSON hands tuples back as lists
        return tuple(tup(e) for e in v) if isinstance(v, list | tuple) else v

    given = {k: tup(v) for k, v in overrides.items()}
    try:
        return replace(spec, **given)
    except (ValueError, TypeError) as exc:
        flags = " ".join(_flag_text(k, v) for k, v in given.items())
        raise ValueError(f"{flags}: on {name}'s declared spec ({_spec_text(spec)}): {exc}"
                         ) from None


def _flag_text(field_name: str, v: Any) -> str:
    """The flag that sets ``field_name`` to ``v``, as it is typed: --no-reverse, --op max."""
    flag = spec_flag(field_name)
    if isinstance(v, bool):
        return flag if v else "--no-" + flag[2:]
    if isinstance(v, tuple):
        return " ".join([flag, *(":".join(e) if isinstance(e, tuple) else str(e) for e in v)])
    return f"{flag} {'none' if v is None else v}"


def _spec_text(spec: TargetSpec) -> str:
    """The fields of ``spec`` that differ from the defaults, as ``op='max', inclusive=False``."""
    base = TargetSpec()
    changed = [f"{f.name}={getattr(spec, f.name)!r}" for f in dataclasses.fields(spec)
               if getattr(spec, f.name) != getattr(base, f.name)]
    return ", ".join(changed) or "the defaults"


class NotAnArray(Exception):
    """The target returned something other than an array (a list, a number, None): what it
    returned, and what a target must return."""


def _host(out: Any, what: str = "") -> np.ndarray:
    """``out`` as a host array, or :class:`NotAnArray` naming what it is."""
    from .testing import to_numpy

    if hasattr(out, "shape") and hasattr(out, "dtype"):  # NumPy, CuPy, torch, JAX
        return to_numpy(out)
    kind = type(out).__name__
    if isinstance(out, list | tuple):
        kind = f"a {kind} of {len(out)} item{'s' * (len(out) != 1)}"
    elif out is not None:
        kind = f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} ({str(out)[:40]})"
    raise NotAnArray(f"returned {kind}{what}, not an array: a target returns its scan as a "
                     f"NumPy array (CuPy for device='gpu'; torch and JAX arrays are read too)")


@dataclass
class Target:
    """A named scan implementation and its spec."""

    name: str
    fn: Callable[[Any], Any]
    spec: TargetSpec = field(default_factory=TargetSpec)
    #: Why the target cannot run here (a missing library), or None.
    unavailable: str | None = None
    #: How a child process re-creates this target (for isolation); None: in-process only.
    locator: str | None = None
    #: The byte every output is filled with before the target runs, where scancheck
    #: allocates the output (``.cu`` targets); None where the target allocates its own.
    output_fill: int | None = None
    #: Compiles or loads whatever the target needs, raising ValueError if it cannot (a
    #: usage error, not a verdict).
    prepare: Callable[[], None] | None = None
    #: Told ("call", n) before and ("return", n) after each run of the target's own code:
    #: a watchdog times the target, not the oracle around it.
    watch: Callable[[str, int], None] | None = None

    def run(self, x: Any, axis: int | None = None) -> Any:
        """The target on ``x`` as its spec takes it (host or device array; N-D with ``axis``
        for a target whose spec has one), the device synchronized: the one place where the
        target's own code runs.  The target is handed a copy of ``x`` in ``x``'s layout, so
        ``x`` is never changed; :class:`InputWritten` if the call changed the copy."""
        n = int(np.prod(x.shape))  # a torch tensor's size is a method
        # A view made by forward() or seeded() hands the target copies of its own.
        given = x if getattr(self.fn, _HANDS_OVER_COPIES, False) else _twin(x)
        if self.watch is not None:
            self.watch("call", n)
        # Overflow and NaN warnings of the target's own arithmetic are not ours to print.
        with np.errstate(all="ignore"):
            out = (self.fn(given, 0 if axis is None else axis) if self.spec.axis == "arg"
                   else self.fn(given))
            if self.spec.device == "gpu":
                import cupy as cp

                cp.cuda.Device().synchronize()
        if self.watch is not None:
            self.watch("return", n)
        if given is not x:
            written = _first_write(x, given)
            if written is not None:
                raise written
        return out

    def __call__(self, x: np.ndarray, axis: int | None = None) -> np.ndarray:
        """Run the target on host data and return a host array (N-D input keeps its layout:
        strides, order and offset reach the target as they are here); :class:`NotAnArray`
        where the target returned no array (a list of numbers, say)."""
        if self.spec.device == "gpu":
            x = _device_view(x)
        out = self.run(x, axis)
        if self.spec.indices and isinstance(out, tuple | list):  # (values, indices), as cummax
            return tuple(_host(v, " in its (values, indices)") for v in out)
        return _host(out)


def forward(target: Target) -> Target:
    """A reverse scan seen as a forward one: its input reversed along the scanned axis (a
    fresh C-contiguous array, checked for writes as :meth:`Target.run` checks its copies),
    its output reversed back.  Other targets are returned as they are."""
    if not target.spec.reverse:
        return target

    def flip(a: Any, axis: int) -> Any:
        return a[(slice(None),) * (axis % a.ndim) + (slice(None, None, -1),)]

    fn = target.fn
    if target.spec.axis == "arg":
        def run(x: Any, axis: int) -> Any:
            return flip(_on_copy(fn, flip(x, axis), axis, contiguous=True), axis)
    else:
        fixed = target.spec.axis if isinstance(target.spec.axis, int) else 0

        def run(x: Any) -> Any:  # type: ignore[misc]
            return flip(_on_copy(fn, flip(x, fixed), contiguous=True), fixed)
    setattr(run, _HANDS_OVER_COPIES, True)
    return replace(target, fn=run, spec=replace(target.spec, reverse=False))


def seeded(target: Target) -> Target:
    """A scan that takes an initial value seen as a plain inclusive one: its input's element
    0 is the initial value and the rest the data, so that every property draws initial
    values as it draws data.  The target is handed copies, checked for writes as
    :meth:`Target.run` checks its own.  Other targets are returned as they are."""
    if not target.spec.initial:
        return target
    from .testing import to_numpy

    fn, inclusive = target.fn, target.spec.inclusive
    identity = get_operator(target.spec.op).identity

    def run(y: Any) -> Any:
        if y.shape[0] == 0:
            return _on_copy(fn, y, initial=identity(y.dtype.name)[()])
        v = to_numpy(y[:1])[0]
        if inclusive:  # output 0 is v itself; the target gives the rest
            return _concat(y[:1], _on_copy(fn, y[1:], initial=v))
        # An exclusive scan never reads its last element: it holds v, as good as any value.
        return _on_copy(fn, _concat(y[1:], y[:1]), initial=v)

    setattr(run, _HANDS_OVER_COPIES, True)
    return replace(target, fn=run, spec=replace(target.spec, inclusive=True, initial=False))


#: Set on a function that calls a target's own function only through :func:`_on_copy`:
#: :meth:`Target.run` hands it ``x`` itself.
_HANDS_OVER_COPIES = "_scancheck_hands_over_copies"


class InputWritten(Exception):
    """The target changed the array it was handed: the first element whose bits changed
    (in C order of the array the target saw), what it held before and after."""

    def __init__(self, index: tuple[int, ...], was: Any, now: Any, shape: tuple[int, ...],
                 dtype: str) -> None:
        self.index, self.was, self.now = index, was, now
        self.shape, self.dtype = shape, dtype
        super().__init__(f"writes into its input: {self.told}")

    @property
    def told(self) -> str:
        """Where and how, for a person: ``x[17] was 3.0, is 0.0 after the call``."""
        was, now = _shown(self.was), _shown(self.now)
        if was == now:  # NaN payloads, say: the bits tell them apart
            was, now = (f"{_shown(v)} (bits 0x{_bits(v):0{2 * v.itemsize}x})"
                        for v in (self.was, self.now))
        return f"x[{', '.join(map(str, self.index))}] was {was}, is {now} after the call"

    def where(self) -> dict[str, Any]:
        """The element and its values, as a smallest case names them."""
        index = self.index[0] if len(self.index) == 1 else list(self.index)
        return {"input index": index, "was": _shown(self.was), "is": _shown(self.now)}


def _shown(v: np.generic) -> str:
    """A scalar's value in the fewest digits that tell it apart in its type: 3.0, -0.0, nan."""
    return str(v)


def _bits(v: np.generic) -> int:
    return int(np.asarray(v).view(f"u{v.itemsize}")[()])


def _on_copy(fn: Callable[..., Any], x: Any, *args: Any, contiguous: bool = False,
            **kwargs: Any) -> Any:
    """``fn(copy, *args, **kwargs)`` for a :func:`_twin` of ``x`` (C-contiguous where
    ``contiguous``); :class:`InputWritten` where the call changed the copy."""
    given = _twin(x, contiguous)
    out = fn(given, *args, **kwargs)
    written = _first_write(x, given)
    if written is not None:
        raise written
    return out


def _library(x: Any) -> str:
    return type(x).__module__.split(".")[0]


def _twin(x: Any, contiguous: bool = False) -> Any:
    """A copy of the NumPy, CuPy or torch array ``x`` where ``x`` is: the same shape, dtype
    and strides at the same offset into a copy of the buffer ``x`` views (its alignment
    kept, for device arrays), so that a target sees the layout it was meant to see; or a
    C-contiguous copy where ``contiguous``."""
    lib = _library(x)
    if lib == "torch":
        import torch

        if contiguous or x.numel() == 0:
            return x.clone(memory_format=torch.contiguous_format)
        # The whole storage, copied, and the same view of the copy.
        whole = torch.as_strided(x, (x.untyped_storage().nbytes() // x.element_size(),), (1,), 0)
        return torch.as_strided(whole.clone(), x.shape, x.stride(), x.storage_offset())
    if contiguous:
        return x.copy(order="C")
    if lib == "cupy":
        return _device_twin(x) if x.size else x.copy()  # nothing to read, nothing to write
    if lib != "numpy":
        raise TypeError(f"a target is handed NumPy, CuPy or torch arrays, not {type(x).__name__}")
    if x.size == 0:  # no element to hold: the strides alone
        return np.lib.stride_tricks.as_strided(np.empty(1, x.dtype), x.shape, x.strides)
    root = x
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        return x.copy(order="K")  # not a view of a plain buffer: its strides' order at least
    offset = x.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    flat = root.copy(order="K").ravel(order="K")  # the same memory order: a view of the copy
    return np.ndarray(x.shape, x.dtype, buffer=flat, offset=offset, strides=x.strides)


#: Device copies keep their original's address modulo this (every CUDA allocation is aligned
#: to it): a target's vector loads meet the alignment they would have met.
_ALIGN = 256


def _device_twin(x: Any) -> Any:
    """:func:`_twin` of a CuPy array: the bytes from its lowest to its highest element."""
    import cupy as cp

    lo = sum(st * (d - 1) for d, st in zip(x.shape, x.strides) if st < 0)
    hi = sum(st * (d - 1) for d, st in zip(x.shape, x.strides) if st > 0) + x.itemsize
    start = x.data.ptr + lo
    span = cp.ndarray((hi - lo,), cp.uint8, cp.cuda.MemoryPointer(x.data.mem,
                                                                   start - x.data.mem.ptr))
    pad = start % _ALIGN
    buf = cp.empty(pad + hi - lo, cp.uint8)
    buf[pad:] = span
    return cp.ndarray(x.shape, x.dtype, buf.data + (pad - lo), strides=x.strides)


#: Elements compared at a time: no temporary of a check past 2**32 is as large as its input.
_COMPARE_CHUNK = 1 << 26


def _first_write(x: Any, given: Any) -> InputWritten | None:
    """Where ``given`` (a copy of ``x`` a target was handed) first differs from ``x`` bit for
    bit, NaN payloads and the sign of zero included (None where nowhere)."""
    if _library(given) == "torch":  # torch arrays are small: __call__'s bfloat16 views
        from .testing import to_numpy

        x, given = to_numpy(x), to_numpy(given)
    xp: Any = np
    if _library(given) == "cupy":
        import cupy as xp

        xp.cuda.Device().synchronize()  # whatever streams the target used
    if given.size == 0:
        return None
    bits = f"u{x.dtype.itemsize}"
    a, b = x.view(bits), given.view(bits)
    step = max(1, _COMPARE_CHUNK // (a.size // a.shape[0]))
    for lo in range(0, a.shape[0], step):
        bad = a[lo:lo + step] != b[lo:lo + step]
        if bool(bad.any()):
            at = np.unravel_index(int(xp.argmax(bad.ravel())), bad.shape)
            index = (lo + int(at[0]), *(int(i) for i in at[1:]))
            was, now = (np.asarray(v[index].get() if xp is not np else v[index])[()]
                        for v in (x, given))
            return InputWritten(index, was, now, tuple(x.shape), x.dtype.name)
    return None


def _concat(a: Any, b: Any) -> Any:
    """``a`` then ``b`` along axis 0, where they are: NumPy, CuPy or torch."""
    lib = type(a).__module__.split(".")[0]
    if lib == "torch":
        import torch

        return torch.cat([a, b])
    return importlib.import_module(lib if lib == "cupy" else "numpy").concatenate([a, b])


def _device_view(x: np.ndarray) -> Any:
    """A CuPy array with ``x``'s shape, strides and offset into a copy of its buffer."""
    import cupy as cp

    if x.dtype.name == "bfloat16":
        return _torch_bfloat16_view(x)
    if x.ndim <= 1 and x.flags.c_contiguous:
        return cp.asarray(x)
    flat, offset = _buffer(x)
    return cp.ndarray(x.shape, x.dtype, cp.asarray(flat).data + offset, strides=x.strides)


def _buffer(x: np.ndarray) -> tuple[np.ndarray, int]:
    """The bytes of the array ``x`` views, in memory order, and the byte offset of ``x`` in them."""
    root = x
    while isinstance(root.base, np.ndarray):
        root = root.base
    flat = root.ravel(order="K").view(np.uint8) if root.size else np.zeros(x.itemsize, np.uint8)
    return flat, x.__array_interface__["data"][0] - root.__array_interface__["data"][0]


def _torch_bfloat16_view(x: np.ndarray) -> Any:
    """A CUDA bfloat16 tensor with ``x``'s shape and strides (CuPy has no bfloat16); a
    negative stride, which torch cannot hold, gets a fresh copy first."""
    import torch

    if any(st < 0 for st in x.strides):
        x = x.copy()
    flat, offset = _buffer(x)
    dev = torch.from_numpy(flat).cuda().view(torch.bfloat16)
    return torch.as_strided(dev, x.shape, [st // 2 for st in x.strides], offset // 2)


def _missing(module: str) -> str | None:
    return None if importlib.util.find_spec(module) else f"{module} is not installed"


def _gpu_missing() -> str | None:
    from .verify import gpu_available

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
    from .kernels import get_variant, scan

    var = get_variant(variant)
    cap = var.capacity(block, var.resolve_params(None)) if var.capacity else None
    # The launcher refuses an empty input with a LaunchError (no grid has zero blocks).
    spec = TargetSpec(op=op, inclusive=var.inclusive, dtypes=_variant_dtypes(var, op),
                      deterministic=var.deterministic, device="gpu", max_n=cap, allows_empty=False)
    return Target(f"scancheck:{variant}", lambda x: scan(x, variant, op, block), spec,
                  _gpu_missing(), locator=f"kernel:{variant}:{block}:{op}")


def model_target(variant: str, block: int = 64, op: str = "add") -> Target:
    """A kernel's CPU model as a target: what the kernel must compute, checked without a GPU."""
    from .kernels import get_variant

    var = get_variant(variant)
    cap = var.capacity(block, var.resolve_params(None)) if var.capacity else 20_000
    spec = TargetSpec(op=op, inclusive=var.inclusive, dtypes=_variant_dtypes(var, op), max_n=cap,
                      allows_empty=False)
    return Target(f"model:{variant}", lambda x: var.build_model(x.shape[0], block).run(x, op),
                  spec, locator=f"model:{variant}:{block}:{op}")


def builtin_targets() -> dict[str, Target]:
    """Every built-in target by name, available or not (see ``Target.unavailable``)."""
    from .kernels import VARIANTS

    def library(name: str, fn: Callable[[Any], Any], spec: TargetSpec,
                unavailable: str | None = None) -> Target:
        return Target(name, fn, spec, unavailable, locator=f"builtin:{name}")

    # Library scans are called with dtype= the input's: by default NumPy, CuPy and torch
    # promote int32 to int64, which the conformance check would (rightly) report.
    targets = [
        library("numpy.cumsum", lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype),
                TargetSpec(dtypes=DTYPES, axis="arg")),
        # Measured on an H100 (2026-11-22): CUB's single-pass scan and torch.cumsum on CUDA
        # return float bits that vary from run to run; declared so, the report still
        # shows what was observed.
        library("cupy.cumsum (CUB)", _cupy_cumsum(["cub"]),
                TargetSpec(device="gpu", deterministic=False, dtypes=_CUPY_DTYPES), _gpu_missing()),
        # Without CUB, CuPy's own scan kernel is compiled with -ftz=true (cupy#9576): float32
        # subnormals read as zero (measured on an H100, docs/findings.md); CUB's does not flush.
        library("cupy.cumsum (no CUB)", _cupy_cumsum([]),
                TargetSpec(device="gpu", subnormals="flush", axis="arg", dtypes=_CUPY_DTYPES),
                _gpu_missing()),
        # torch 2.13 has no CPU cumsum for uint16, uint32 or uint64.
        library("torch.cumsum (CPU)", _torch_op("cumsum", cuda=False),
                TargetSpec(dtypes=(*KERNEL_DTYPES, "float16", "bfloat16", "int8", "int16", "uint8"),
                           axis="arg"), _missing("torch")),
        library("torch.cumsum (CUDA)", _torch_op("cumsum", cuda=True),
                TargetSpec(device="gpu", deterministic=False, axis="arg",
                           dtypes=(*KERNEL_DTYPES, *_TORCH_HALVES, "int8", "int16", "uint8")),
                _missing("torch") or _gpu_missing()),
        # JAX computes in 32 bits unless jax_enable_x64 is set: the 32-bit targets declare
        # only those, the x64 ones turn it on for their call.  On
        # CPUs XLA reads subnormals as zero by design (DAZ and FTZ; jax 0.10.2 returns zeros
        # for the scan of [2**-126 - 2**-149, 2**-149]): declared, not a finding.
        library("jax.numpy.cumsum", _jax_numpy("cumsum", False), replace(_JAX_SPEC, axis="arg"),
                _missing("jax")),
        library("jax.numpy.cumprod", _jax_numpy("cumprod", False),
                replace(_JAX_SPEC, op="mul", axis="arg"), _missing("jax")),
        library("jax.lax.associative_scan", _jax_associative_scan(False), _JAX_SPEC,
                _missing("jax")),
        # With jax_enable_x64 on (for the call only): the 64-bit types.
        library("jax.numpy.cumsum (x64)", _jax_numpy("cumsum", True),
                replace(_JAX_SPEC, dtypes=_JAX_X64, axis="arg"), _missing("jax")),
        library("jax.numpy.cumprod (x64)", _jax_numpy("cumprod", True),
                replace(_JAX_SPEC, op="mul", dtypes=_JAX_X64, axis="arg"), _missing("jax")),
        library("jax.lax.associative_scan (x64)", _jax_associative_scan(True),
                replace(_JAX_SPEC, dtypes=_JAX_X64), _missing("jax")),
        # Scans from an initial value (exclusive): Python's own, and JAX's carry scan.
        library("itertools.accumulate(initial=)", _accumulate("add"),
                TargetSpec(inclusive=False, initial=True)),
        library("itertools.accumulate(operator.mul, initial=)", _accumulate("mul"),
                TargetSpec(op="mul", inclusive=False, initial=True)),
        # lax.scan is a sequential loop, compiled anew for every length: checked to 2**12.
        library("jax.lax.scan (add, initial)", _jax_lax_scan("add"),
                replace(_JAX_SPEC, inclusive=False, initial=True, max_n=2**12), _missing("jax")),
        library("jax.lax.scan (mul, initial)", _jax_lax_scan("mul"),
                replace(_JAX_SPEC, op="mul", inclusive=False, initial=True, max_n=2**12),
                _missing("jax")),
        library("numpy.cumprod", lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype),
                TargetSpec(op="mul", dtypes=DTYPES, axis="arg")),
        # Called without dtype=: bool and narrow integers come back widened.
        library("numpy.cumsum (default dtype)", lambda x, axis: np.cumsum(x, axis=axis),
                TargetSpec(dtypes=_PROMOTED, promote=_NUMPY_PROMOTE, axis="arg")),
        library("numpy.cumprod (default dtype)", lambda x, axis: np.cumprod(x, axis=axis),
                TargetSpec(op="mul", dtypes=_PROMOTED, promote=_NUMPY_PROMOTE, axis="arg")),
        library("cupy.cumsum (default dtype)", _cupy_cumsum([], keep_dtype=False),
                TargetSpec(device="gpu", dtypes=_PROMOTED, promote=_NUMPY_PROMOTE,
                           axis="arg"), _gpu_missing()),
        library("torch.cumsum (CPU, default dtype)", _torch_op("cumsum", False, False),
                TargetSpec(dtypes=(*_PROMOTED, "uint64"), promote=_TORCH_PROMOTE,
                           axis="arg"), _missing("torch")),
        library("torch.cumprod (CPU, default dtype)", _torch_op("cumprod", False, False),
                TargetSpec(op="mul", dtypes=(*_PROMOTED, "uint64"), promote=_TORCH_PROMOTE,
                           axis="arg"), _missing("torch")),
        library("torch.cumsum (CUDA, default dtype)", _torch_op("cumsum", True, False),
                TargetSpec(device="gpu", dtypes=(*_PROMOTED, "uint64"), promote=_TORCH_PROMOTE,
                           axis="arg"), _missing("torch") or _gpu_missing()),
        library("jax.numpy.cumsum (default dtype)", _jax_numpy("cumsum", False, False),
                replace(_JAX_SPEC, dtypes=_PROMOTED, promote=_JAX_PROMOTE, axis="arg"),
                _missing("jax")),
        # Running maxima and minima, of booleans too (a running or and a running and).
        library("numpy.maximum.accumulate", lambda x, axis: np.maximum.accumulate(x, axis),
                TargetSpec(op="max", dtypes=INPUT_DTYPES, axis="arg")),
        library("numpy.minimum.accumulate", lambda x, axis: np.minimum.accumulate(x, axis),
                TargetSpec(op="min", dtypes=INPUT_DTYPES, axis="arg")),
        library("numpy.logaddexp.accumulate", lambda x, axis: np.logaddexp.accumulate(x, axis),
                TargetSpec(op="logaddexp", dtypes=("float32", "float64", "float16"),
                           axis="arg")),
        library("cupy.cumprod", _cupy_op("cumprod"),
                TargetSpec(op="mul", device="gpu", axis="arg", dtypes=_CUPY_DTYPES),
                _gpu_missing()),
    ]
    torch_gpu = _missing("torch") or _gpu_missing()
    for name, op, dtypes, extra in _TORCH_SCANS:
        for device, missing in (("cpu", _missing("torch")), ("gpu", torch_gpu)):
            # On CUDA, cumsum's bits vary from run to run (measured on an H100, 2026-11-22).
            spec = TargetSpec(op=op, dtypes=dtypes, device=device, axis="arg",
                              deterministic=device == "cpu", **extra)
            targets.append(library(f"torch.{name} ({'CPU' if device == 'cpu' else 'CUDA'})",
                                   _torch_op(name, device == "gpu"), spec, missing))
    for name, var in VARIANTS.items():
        if var.racy or "add" not in var.operators:
            continue
        targets.append(kernel_target(name))
        targets.append(model_target(name))
    return {t.name: t for t in targets}


def load_import_path(path: str, spec: TargetSpec | None = None) -> Target:
    """A target from ``package.module:function`` (importable, or under the working directory)
    or ``path/to/file.py:function`` (loaded from that file; its directory need not be on
    ``sys.path``); the function may carry ``scan_spec``, the module ``SCAN_SPEC``.  Importing
    writes no bytecode cache (a module of the working directory would leave ``__pycache__``
    there).  A ValueError names a module, file or function that is not there."""
    if ":" not in path:
        raise ValueError(f"target {path!r} must look like package.module:function or "
                         f"path/to/file.py:function")
    module_name, attr = path.rsplit(":", 1) if _is_file_form(path) else path.split(":", 1)
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        module = (_module_from_file(path, module_name) if _is_file_form(path)
                  else _import(path, module_name))
    finally:
        sys.dont_write_bytecode = writes
    fn = module
    for part in attr.split("."):
        if not hasattr(fn, part):
            raise ValueError(f"target {path!r}: {module_name} has no attribute {attr!r}")
        fn = getattr(fn, part)
    if not callable(fn):
        raise ValueError(f"target {path!r} is not callable")
    declared = getattr(fn, "scan_spec", None) or getattr(module, "SCAN_SPEC", None)
    return Target(path, fn, spec or declared or TargetSpec(), locator=f"import:{path}")


def _is_file_form(path: str) -> bool:
    """Whether ``path`` names a function in a Python file (``dir/file.py:fn``), not a module."""
    return path.rsplit(":", 1)[0].endswith(".py")


def _import(path: str, module_name: str) -> Any:
    if os.getcwd() not in sys.path:  # as `python -m` would: modules of the working directory
        sys.path.append(os.getcwd())
    try:
        return importlib.import_module(module_name)
    except Exception as exc:  # a target that cannot be imported is a usage error, not a verdict
        raise ValueError(f"target {path!r}: module {module_name!r} cannot be imported "
                         f"({type(exc).__name__}: {exc})") from None


def _module_from_file(path: str, file: str) -> Any:
    """The module of the Python file ``file``, loaded once per process under a name of its
    own (its stem and a hash of its absolute path), so that it shadows no importable module
    and two files of one stem stay apart."""
    where = Path(file).resolve()
    if not where.is_file():
        raise ValueError(f"target {path!r}: {file} is not a file")
    stem = "".join(c if c.isalnum() else "_" for c in where.stem)
    name = f"_scancheck_file_{stem}_{hashlib.sha256(str(where).encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, where)
    if spec is None or spec.loader is None:
        raise ValueError(f"target {path!r}: {file} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look a module up by its name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ValueError(f"target {path!r}: {file} cannot be imported "
                         f"({type(exc).__name__}: {exc})") from None
    return module


def cu_prelude(dtype: str) -> str:
    """What scancheck puts before a ``.cu`` target's source for element type ``dtype``."""
    return f"typedef {CUDA_SCALAR[as_dtype(dtype).name]} T;\n"


def cuda_file_target(path: str | Path, block: int = 256, spec: TargetSpec | None = None) -> Target:
    """A target from a ``.cu`` file with the documented ``scan`` signature (see module doc)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path} is not a file")
    from .kernels import IeeeModule, check_block, expand_source

    check_block(block)

    source = expand_source(path.name, path.parent)
    spec = spec or TargetSpec(device="gpu")
    # Zero blocks cannot be launched: the harness, not the kernel, would answer n = 0.
    spec = replace(spec, device="gpu", allows_empty=False)
    kernels: dict[str, Any] = {}

    def kernel(dt: str) -> Any:
        if dt not in kernels:
            import cupy as cp

            try:
                kernels[dt] = IeeeModule(f"{cu_prelude(dt)}{source}").get_function("scan")
            except cp.cuda.compiler.CompileException as exc:
                first = next((ln for ln in str(exc).splitlines() if "error" in ln), str(exc))
                raise ValueError(f"{path} does not compile for dtype={dt}: {first.strip()}") from None
        return kernels[dt]

    def prepare() -> None:
        for dt in spec.dtypes:
            kernel(dt)

    def run(x: Any) -> Any:
        import cupy as cp

        n = x.shape[0]
        blocks = -(-n // block)
        out = cp.empty_like(x)
        out.view(cp.uint8).fill(_FILL)
        scratch = cp.zeros(16 * (blocks + 1), dtype=cp.uint8)
        kernel(x.dtype.name)((blocks,), (block,), (x, out, np.int64(n), scratch),
                             shared_mem=2 * block * x.itemsize)
        return out

    return Target(str(path), run, spec, _gpu_missing(), locator=f"cu:{path}:{block}",
                  output_fill=_FILL, prepare=prepare)


_FILL = 0xFF  # NaN for floats, -1 for integers


def resolve(name: str, spec: TargetSpec | None = None, block: int = 256,
            overrides: dict[str, Any] | None = None) -> Target:
    """A target by built-in name, ``kernel:VARIANT``, ``model:VARIANT``, ``.cu`` path, import
    path or ``file.py:function``.  ``spec`` replaces the declared spec of a ``.cu`` file or
    an import path; ``overrides`` (field -> value) replace just those fields of whatever
    spec the target has, any target (a ValueError naming the flags where the result is no
    valid spec).  A GPU spec where no GPU or CuPy is found leaves the target unavailable."""
    overrides = dict(overrides or {})
    op = overrides.get("op")
    if name.startswith("builtin:"):
        name = name[len("builtin:"):]
    builtins = builtin_targets()
    kernel = name.startswith(("kernel:", "model:", "scancheck:"))
    # A kernel computes the operator it is built for: an --op given builds that one.
    target: Target | None = None if kernel and op else builtins.get(name)
    for prefix, make in (("kernel:", kernel_target), ("model:", model_target),
                         ("scancheck:", kernel_target)):
        if target is None and name.startswith(prefix):
            parts = name[len(prefix):].split(":")
            built = (parts[2:3] or [op])[0]
            target = make(parts[0], *(int(parts[1]),) if len(parts) > 1 else (),
                          **({"op": built} if built else {}))
    if target is None and (name.startswith("cu:") or name.endswith(".cu")):
        path, size = name, block
        if name.startswith("cu:"):
            parts = name[3:].rsplit(":", 1)
            path, size = parts[0], int(parts[1]) if len(parts) > 1 else block
        # Its kernels are compiled for the spec's dtypes: the merged spec, before compiling.
        return cuda_file_target(path, size, with_overrides(spec or TargetSpec(device="gpu"),
                                                           overrides, name))
    if target is None:
        if name.startswith("import:"):
            name = name[len("import:"):]
        if ":" not in name:
            known = ", ".join(sorted(builtins))
            raise ValueError(f"target {name!r} is not a built-in ({known}), a .cu file, "
                             f"kernel:VARIANT, model:VARIANT, package.module:function or "
                             f"path/to/file.py:function")
        target = load_import_path(name, spec)
    if not overrides:
        return target
    merged = with_overrides(target.spec, overrides, target.name)
    unavailable = target.unavailable
    if merged.device == "gpu" and target.spec.device != "gpu" and not unavailable:
        unavailable = _missing("cupy") or _gpu_missing()
    return replace(target, spec=merged, unavailable=unavailable)


