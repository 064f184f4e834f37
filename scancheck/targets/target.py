"""Scan implementations scancheck can check, and how each is called.

A :class:`Target` is a callable taking a 1-D array (NumPy, or CuPy for ``device="gpu"``)
and returning its scan, with a :class:`~scancheck.targets.spec.TargetSpec` that declares
what it computes.  A target is only ever handed copies of its input (:meth:`Target.run`):
what it writes there never reaches the oracle's input, and any write is an
:class:`InputWritten`.  The built-in targets of libraries are in :mod:`scancheck.adapters`;
names become targets in :mod:`scancheck.targets.resolve`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..core.operators import get_operator
from .spec import TargetSpec, ranks_taken

#: Set on an exception raised inside a target's own code (see :meth:`Target.run`).
_RAISED_BY_TARGET = "_scancheck_raised_by_target"


def raised_by_target(exc: BaseException) -> bool:
    """Whether ``exc`` came out of a target's own code, not scancheck's around it."""
    return bool(getattr(exc, _RAISED_BY_TARGET, False))


def tupled(combine: Callable) -> Callable[[Any, Any], tuple]:
    """``combine`` on the leaves a JIT's associative_scan hands it (lists, maybe), as tuples."""
    return lambda a, b: tuple(combine(tuple(a), tuple(b)))


class PerCombine:
    """A compiled function for each (combine, axis), built by ``build(combine, axis)`` once and
    kept for the last ``kept`` of them, each combine held so that its id is not reused.  A
    check alternates among its probe monoids from one example to the next: keeping one
    combine's function at a time would make torch.compile and
    jax.jit trace and compile anew at every switch (0.4-1 s each for torch on an H100 with
    every cache warm)."""

    def __init__(self, build: Callable[[Callable, int], Any], kept: int = 16) -> None:
        self._build, self._kept = build, kept
        self._fns: OrderedDict[tuple[int, int], tuple[Callable, Any]] = OrderedDict()

    def __call__(self, combine: Callable, axis: int = 0) -> Any:
        key = (id(combine), axis)
        if key in self._fns:
            self._fns.move_to_end(key)
        else:
            while len(self._fns) >= self._kept:
                self._fns.popitem(last=False)
            self._fns[key] = (combine, self._build(combine, axis))
        return self._fns[key][1]


class NotAnArray(Exception):
    """The target returned something other than an array (a list, a number, None): what it
    returned, and what a target must return."""


def _host(out: Any, what: str = "") -> np.ndarray:
    """``out`` as a host array, or :class:`NotAnArray` naming what it is."""
    from ..core.arrays import to_numpy

    if hasattr(out, "shape") and hasattr(out, "dtype"):  # NumPy, CuPy, torch, JAX
        host = to_numpy(out)
        # A scan may hand back the same buffer on every call (a cached workspace), and a
        # view of host memory (NumPy, torch on the CPU) would change under the output kept
        # from an earlier call: two runs compared would be one buffer.  CuPy's is a copy.
        return host if hasattr(out, "get") else host.copy()
    kind = type(out).__name__
    if isinstance(out, list | tuple):
        kind = f"a {kind} of {len(out)} item{'s' * (len(out) != 1)}"
    elif out is not None:
        kind = f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} ({str(out)[:40]})"
    raise NotAnArray(f"returned {kind}{what}, not an array: a target returns its scan as a "
                     f"NumPy array (CuPy for device='gpu'; torch and JAX arrays are read too)")


@dataclass(frozen=True)
class Witness:
    """A case that showed a known bug on a target: property ``prop`` on ``n`` elements of
    ``dtype`` drawn from ``distribution`` with ``seed`` (the input is a function of these).
    A check runs it before its search, so that whether the bug is there is never left to
    what the search happens to draw."""

    prop: str
    n: int
    dtype: str
    distribution: str
    seed: int


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
    #: Seconds spent in the target's own code so far, in one cell its views share: what a
    #: budget that ran out tells of who took the time.
    spent: list[float] = field(default_factory=lambda: [0.0], compare=False, repr=False)
    #: Per kind of call (dtypes, rank, memory layout, axis, combine), in this process and in
    #: one cell its views share: the seconds its first call took beyond its second (until
    #: the second, the first's whole), and whether the second came.  Where a library
    #: compiles per kind (CuPy's CUB, torch.compile with dynamic shapes, Triton, numba), that
    #: excess is the compile, which no search budget is charged (:meth:`uncharged`); a
    #: target as slow on every call has none.
    first_calls: dict[tuple, list] = field(default_factory=dict, compare=False, repr=False)
    #: Hand it every axis counted from the front: it refused a negative one, and a
    #: property's search goes on along the axes it takes.
    front_axes: bool = False
    #: Hand it no empty batch: its answer to one was wrong, and a property's search goes
    #: on with batches that hold elements.
    no_empty_batches: bool = False
    #: The spec its user declared, where this target is a view of it under another spec
    #: (:func:`seeded`, :func:`forward`): a flag a diagnosis suggests must fit that one.
    declared: TargetSpec | None = None
    #: Cases each property checks first: where a known bug showed (:class:`Witness`).
    witnesses: tuple[Witness, ...] = ()

    def __post_init__(self) -> None:
        """Raise a TypeError naming the field unless ``fn`` is callable and ``spec`` is a
        :class:`TargetSpec`."""
        if not callable(self.fn):
            raise TypeError(f"Target {self.name!r}: fn={self.fn!r} is not callable; give the "
                            f"function that scans")
        if not isinstance(self.spec, TargetSpec):
            raise TypeError(f"Target {self.name!r}: spec={self.spec!r} must be a TargetSpec, "
                            f"as TargetSpec(op='max', dtypes=('float32',))")

    def uncharged(self) -> float:
        """Seconds so far that the first call of each kind took beyond the second
        (:attr:`first_calls`)."""
        return sum(excess for excess, _ in self.first_calls.values())

    @contextlib.contextmanager
    def own_code(self, n: int, kind: tuple | None = None) -> Iterator[None]:
        """Around a call of the target's own code on ``n`` elements: the watchdog told, its
        NumPy warnings silenced, and an exception it raises marked as its own; the first two
        calls of ``kind`` timed into :attr:`first_calls`."""
        if self.watch is not None:
            self.watch("call", n)
        start = time.monotonic()
        try:
            # Overflow and NaN warnings of the target's own arithmetic are not ours to print.
            with np.errstate(all="ignore"):
                yield
        except Exception as exc:
            # Marked, so that a property can tell the target's exception from its oracle's.
            with contextlib.suppress(AttributeError, TypeError):
                setattr(exc, _RAISED_BY_TARGET, True)
            raise
        finally:
            took = time.monotonic() - start
            self.spent[0] += took
            if kind is not None:
                seen = self.first_calls.get(kind)
                if seen is None:
                    self.first_calls[kind] = [took, False]
                elif not seen[1]:
                    self.first_calls[kind] = [max(0.0, seen[0] - took), True]
            # The call is over, raised or not: the watchdog's per-call limit ends with it.
            if self.watch is not None:
                self.watch("return", n)

    def run(self, x: Any, axis: int | None = None) -> Any:
        """The target on ``x`` as its spec takes it (host or device array; N-D with ``axis``
        for a target whose spec has one), the device synchronized: the one place where the
        target's own code runs.  The target is handed a copy of ``x`` in ``x``'s layout, so
        ``x`` is never changed; :class:`InputWritten` if the call changed the copy."""
        n = int(np.prod(x.shape))  # a torch tensor's size is a method
        ranks = ranks_taken(self.spec.axis, self.spec.ndim)
        if ranks and len(x.shape) == 1 and 1 not in ranks and self.spec.axis is not None:
            # A 1-D case for a target of higher ranks only (DataFrame.cumsum, or one fixed on
            # axis 1): one row of the least rank it takes, along its axis, the rest 1.
            at = 0 if axis is None else axis
            if isinstance(self.spec.axis, int):
                at = self.spec.axis % min(ranks)
            shape = [1] * min(ranks)
            shape[at] = x.shape[0]
            out = self.run(x.reshape(shape), at)
            return (out[0].reshape(x.shape), out[1].reshape(x.shape)) if isinstance(
                out, tuple | list) else out.reshape(x.shape)
        # A view made by forward() or seeded() hands the target copies of its own.
        given = x if getattr(self.fn, _HANDS_OVER_COPIES, False) else _twin(x)
        with self.own_code(n, (str(x.dtype), len(x.shape), _layout(x), axis)):
            out = (self.fn(given, 0 if axis is None else axis) if self.spec.axis == "arg"
                   else self.fn(given))
            if self.spec.device == "gpu":
                import cupy as cp

                cp.cuda.Device().synchronize()
        if given is not x:
            written = first_write(x, given)
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


def _layout(x: Any) -> str:
    """``x``'s memory order as a library that compiles per layout tells it (numba: C, F, A)."""
    flags = getattr(x, "flags", None)
    if flags is None:
        return "-"
    return "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"


def not_installed(module: str) -> str | None:
    """Why a target needing ``module`` cannot run here, or None where it is installed."""
    return None if importlib.util.find_spec(module) else f"{module} is not installed"


def no_gpu() -> str | None:
    """Why a GPU target cannot run here, or None where a GPU and CuPy are found."""
    from ..core.devices import gpu_available

    ok, why = gpu_available()
    return None if ok else why


def builtin(name: str, fn: Callable[..., Any], spec: TargetSpec,
            unavailable: str | None = None) -> Target:
    """A built-in target: a child process re-creates it by its name (``builtin:NAME``)."""
    return Target(name, fn, spec, unavailable, locator=f"builtin:{name}")


def forward(target: Target) -> Target:
    """A reverse scan seen as a forward one: its input reversed along the scanned axis, laid
    out as the input is (its strides and offset: a transposed, strided or Fortran-order
    input reaches a reverse scan as such) and checked for writes as :meth:`Target.run`
    checks its copies, its output reversed back.  Other targets are returned as they are."""
    if not target.spec.reverse:
        return target

    def flip(a: Any, axis: int) -> Any:
        return a[(slice(None),) * (axis % a.ndim) + (slice(None, None, -1),)]

    fn = target.fn
    if target.spec.axis == "arg":
        def run(x: Any, axis: int) -> Any:
            return flip(_on_copy(fn, flip(x, axis), axis, layout=x), axis)
    else:
        fixed = target.spec.axis if isinstance(target.spec.axis, int) else 0

        def run(x: Any) -> Any:  # type: ignore[misc]
            return flip(_on_copy(fn, flip(x, fixed), layout=x), fixed)
    setattr(run, _HANDS_OVER_COPIES, True)
    return replace(target, fn=run, spec=replace(target.spec, reverse=False),
                   declared=target.declared or target.spec)


def seeded(target: Target) -> Target:
    """A scan that takes an initial value seen as a plain inclusive one: its input's element
    0 is the initial value and the rest the data, so that every property draws initial
    values as it draws data.  The target is handed copies, checked for writes as
    :meth:`Target.run` checks its own.  Other targets are returned as they are."""
    if not target.spec.initial:
        return target
    from ..core.arrays import to_numpy

    fn, inclusive = target.fn, target.spec.inclusive
    identity = get_operator(target.spec.op).identity

    def run(y: Any) -> Any:
        if y.shape[0] == 0:
            return _on_copy(fn, y, initial=identity(y.dtype.name)[()])
        v = to_numpy(y[:1])[0]
        if inclusive:  # output 0 is v itself; the target gives the rest
            return _concat(y[:1], _on_copy(fn, y[1:], initial=v))
        # An exclusive scan never reads its last element: it holds a value other than v, so
        # that a target taking its start from there (a wrap-around) shows.
        return _on_copy(fn, _concat(y[1:], _other_than(y, v)), initial=v)

    setattr(run, _HANDS_OVER_COPIES, True)
    return replace(target, fn=run, spec=replace(target.spec, inclusive=True, initial=False),
                   declared=target.declared or target.spec)


def _other_than(y: Any, v: Any) -> Any:
    """One element, an array of ``y``'s kind: ``y``'s last where its value differs from
    ``v`` (``y[0]``), else one made from ``v`` that differs (1 - 2v, or every bit flipped)."""
    from ..core.arrays import to_numpy

    if y.shape[0] > 1:
        last = to_numpy(y[-1:])[0]
        if not (last == v or (last != last and v != v)):
            return y[-1:]
    head = y[:1]
    return 1 - 2 * head if np.asarray(v).dtype.kind not in "biu" else ~head


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


def _on_copy(fn: Callable[..., Any], x: Any, *args: Any, layout: Any = None,
             **kwargs: Any) -> Any:
    """``fn(copy, *args, **kwargs)`` for a :func:`_twin` of ``x`` (of ``layout``, an array of
    x's shape, holding x's values, where given); :class:`InputWritten` where the call changed
    the copy."""
    given = _twin(x if layout is None else layout)
    if layout is not None:
        given[...] = x
    out = fn(given, *args, **kwargs)
    written = first_write(x, given)
    if written is not None:
        raise written
    return out


def _library(x: Any) -> str:
    return type(x).__module__.split(".")[0]


def _twin(x: Any) -> Any:
    """A copy of the NumPy, CuPy or torch array ``x`` where ``x`` is: the same shape, dtype
    and strides at the same offset into a copy of the buffer ``x`` views (its alignment
    kept, for device arrays), so that a target sees the layout it was meant to see."""
    lib = _library(x)
    if lib == "torch":
        import torch

        if x.numel() == 0:
            return x.clone(memory_format=torch.contiguous_format)
        # The whole storage, copied, and the same view of the copy.
        whole = torch.as_strided(x, (x.untyped_storage().nbytes() // x.element_size(),), (1,), 0)
        return torch.as_strided(whole.clone(), x.shape, x.stride(), x.storage_offset())
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


def first_write(x: Any, given: Any) -> InputWritten | None:
    """Where ``given`` (a copy of ``x`` a target was handed) first differs from ``x`` bit for
    bit, NaN payloads and the sign of zero included (None where nowhere)."""
    if _library(given) == "torch":  # torch arrays are small: __call__'s bfloat16 views
        from ..core.arrays import to_numpy

        x, given = to_numpy(x), to_numpy(given)
    xp: Any = np
    if _library(given) == "cupy":
        import cupy as xp

        xp.cuda.Device().synchronize()  # whatever streams the target used
    if given.size == 0:
        return None
    bits = f"u{x.dtype.itemsize}"
    a, b = x.view(bits), given.view(bits)
    if xp is not np and a.flags.c_contiguous and b.flags.c_contiguous:
        from ..core.cuda import first_difference

        at = first_difference(a, b)
        if at < 0:
            return None
        index = tuple(int(i) for i in np.unravel_index(at, a.shape))
        was, now = (np.asarray(v[index].get())[()] for v in (x, given))
        return InputWritten(index, was, now, tuple(x.shape), x.dtype.name)
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
