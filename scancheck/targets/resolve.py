"""From a name to a :class:`~scancheck.targets.target.Target`: a built-in, ``kernel:VARIANT``,
``model:VARIANT``, ``package.module:function``, ``path/to/file.py:function`` or a ``.cu`` file.

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

import difflib
import inspect
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..core.arrays import as_dtype
from ..core.dtypes import CUDA_SCALAR, DTYPES
from ..core.loading import (
    LibraryMissing,
    import_here,
    is_file_form,
    library_missing,
    module_from_file,
    raised_at,
)
from . import builtin_tables
from .kernel_targets import kernel_target, model_target
from .spec import TargetSpec, over_tuples, with_overrides
from .target import Target, no_gpu, not_installed


def load_import_path(path: str, spec: TargetSpec | None = None) -> Target:
    """A target from ``package.module:function`` (importable, or under the working directory)
    or ``path/to/file.py:function`` (loaded from that file; its directory need not be on
    ``sys.path``); the function may carry ``scan_spec``, the module ``SCAN_SPEC``.  Importing
    writes no bytecode cache (a module of the working directory would leave ``__pycache__``
    there).  A ValueError names a module, file or function that is not there."""
    if ":" not in path:
        raise ValueError(f"target {path!r} must look like package.module:function or "
                         f"path/to/file.py:function")
    module_name, attr = path.rsplit(":", 1) if is_file_form(path) else path.split(":", 1)
    if not module_name or not attr:
        raise ValueError(f"target {path!r} names no {'function' if module_name else 'module'}: "
                         f"give package.module:function or path/to/file.py:function")
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        module = (module_from_file(module_name, f"target {path!r}") if is_file_form(path)
                  else _import(path, module_name))
    finally:
        sys.dont_write_bytecode = writes
    fn = module
    for part in attr.split("."):
        if not hasattr(fn, part):
            # Names only: reading each attribute may import (a lazy module's __getattr__).
            close = difflib.get_close_matches(part, [n for n in dir(fn) if not n.startswith("_")],
                                              n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise ValueError(f"target {path!r}: {module_name} has no attribute {attr!r}{hint}")
        fn = getattr(fn, part)
    if not callable(fn):
        raise ValueError(f"target {path!r} is not callable")
    declared = None
    for where, name in ((fn, "scan_spec"), (module, "SCAN_SPEC")) if spec is None else ():
        declared = getattr(where, name, None)
        if declared is None:
            continue
        if not isinstance(declared, TargetSpec):
            raise ValueError(f"target {path!r}: its {name} is a {type(declared).__name__}; "
                             f"it must be a scancheck.TargetSpec, as TargetSpec(dtypes="
                             f"('float32',), op='add')")
        break
    return Target(path, fn, spec or declared or TargetSpec(), locator=f"import:{path}")


def _fixed_axis(name: str, declared: int | str | None, given: int | str | None) -> str:
    """Why ``--axis`` cannot change a built-in's axis: scancheck calls it as its axis says."""
    def text(axis: int | str | None) -> str:
        return "none" if axis is None else str(axis)

    how = ("on 1-D arrays, as fn(x)" if declared is None else
           "as fn(x, axis), on every axis" if declared == "arg" else
           f"as fn(x), scanning axis {declared}")
    return (f"--axis {text(given)}: {name} is called {how}, so --axis can only be "
            f"{text(declared)} for it; leave --axis out")


def _import(path: str, module_name: str) -> Any:
    try:
        return import_here(module_name)
    except Exception as exc:  # a target that cannot be imported is a usage error, not a verdict
        lacking = (library_missing(exc, module_name) if isinstance(exc, ModuleNotFoundError)
                   else None)
        if lacking:  # unless what it imports is missing here: the machine's problem
            raise LibraryMissing(f"target {path!r} cannot run here: its module "
                                 f"{module_name!r} imports {lacking}, which is not installed"
                                 ) from None
        if os.path.isfile(module_name):  # no module of that name: a file was meant
            raise ValueError(f"target {path!r}: {module_name} is a file but no module; a file "
                             f"target is path/to/file.py:function, its name ending in .py"
                             ) from None
        raise ValueError(f"target {path!r}: module {module_name!r} cannot be imported "
                         f"({type(exc).__name__}{raised_at(exc, module=module_name)}: "
                         f"{exc})") from None


def cu_prelude(dtype: str) -> str:
    """What scancheck puts before a ``.cu`` target's source for element type ``dtype``."""
    return f"typedef {CUDA_SCALAR[as_dtype(dtype).name]} T;\n"


def cuda_file_target(path: str | Path, block: int = 256, spec: TargetSpec | None = None) -> Target:
    """A target from a ``.cu`` file with the documented ``scan`` signature (see module doc)."""
    given, path = str(path), Path(path).expanduser()
    if not path.is_file():
        looked = f" (looked for {path.resolve()})" if str(path.resolve()) != given else ""
        raise ValueError(f"{given} is not a file{looked}")
    from ..core.cuda import IeeeModule, check_block, expand_source

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

    return Target(str(path), run, spec, no_gpu(), locator=f"cu:{path}:{block}",
                  output_fill=_FILL, prepare=prepare)


_FILL = 0xFF  # NaN for floats, -1 for integers


def _unknown_target(name: str, known: list[str]) -> str:
    """The usage error of a target name that is none of the forms: the built-ins it is
    closest to (a typo), or what a file's name lacks; never the whole list of built-ins
    (some 150 names), which ``scancheck check --help`` prints."""
    forms = ("a built-in, a .cu file, kernel:VARIANT, model:VARIANT, package.module:function "
             "or path/to/file.py:function")
    if name.endswith(".py"):
        return (f"target {name!r} names a file but no function in it: give "
                f"{name}:FUNCTION (the target is one of {forms})")
    # A name's library call, without the variant in brackets, finds each of its variants.
    calls: dict[str, list[str]] = {}
    for full in known:
        calls.setdefault(full.split(" (")[0], []).append(full)
    close = difflib.get_close_matches(name, [*known, *calls], n=3, cutoff=0.75)
    meant = list(dict.fromkeys(full for c in close for full in calls.get(c, [c])))[:4]
    hint = (f"; did you mean {' or '.join(map(repr, meant))}?" if meant
            else "; `scancheck check --help` lists the built-ins")
    return f"target {name!r} is none of {forms}{hint}"


def unknown_name(name: str) -> str | None:
    """The usage error of ``name`` where it is none of the target forms (no built-in, and no
    prefix, ``.cu`` or ``:`` of the other forms), told before anything is loaded; else None
    (whether such a target loads is for its check to find)."""
    bare = name.removeprefix("builtin:")
    if bare.endswith(".cu") or ":" in bare or builtin_tables.find(bare) is not None:
        return None
    return _unknown_target(bare, builtin_tables.names())


def _check_callable_as(fn: Any, spec: TargetSpec, name: str) -> None:
    """Raise a ValueError naming the signature and the flags unless a check can call ``fn``
    as ``spec`` says (fn(x), fn(x, axis), fn(x, initial=v), fn(x, offsets) and the other
    segment descriptions; over tuples fn(elems), fn(elems, combine), each with axis after
    it under --axis arg); a function it cannot inspect is left to its first call."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    args: tuple[str, ...] = ("x",)
    if over_tuples(spec):
        args = ("elems", "combine") if spec.combine else ("elems",)
    elif spec.segments is not None:
        args = ("x", spec.segments.partition(":")[0])
    if spec.axis == "arg":
        args += ("axis",)
    kwargs = {"initial": "v"} if spec.initial and not over_tuples(spec) else {}
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        call = f"fn({', '.join([*args, *(f'{k}={v}' for k, v in kwargs.items())])})"
        raise ValueError(f"target {name!r}: {getattr(fn, '__name__', 'the function')}"
                         f"{signature} cannot be called as {call} ({exc}); scancheck calls "
                         f"fn(x), fn(x, axis) with --axis arg, fn(x, initial=v) with "
                         f"--initial, fn(x, offsets) with --segments offsets (flags, keys, "
                         f"groups alike), fn(elems) with --op MODULE:MONOID, fn(elems, "
                         f"combine) with --combine") from None


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
    kernel = name.startswith(("kernel:", "model:", "scancheck:"))
    # A kernel computes the operator it is built for: an --op given builds that one.  A
    # built-in name loads its own library's table alone.
    target: Target | None = None if kernel and op else builtin_tables.find(name)
    for prefix, make in (("kernel:", kernel_target), ("model:", model_target),
                         ("scancheck:", kernel_target)):
        if target is None and name.startswith(prefix):
            parts = name[len(prefix):].split(":")
            built = (parts[2:3] or [op])[0]
            if len(parts) > 3:
                raise ValueError(f"target {name!r}: {len(parts)} fields where "
                                 f"{prefix}VARIANT[:BLOCK[:OP]] has 3 at most")
            if len(parts) > 1 and not parts[1].isdigit():
                raise ValueError(f"target {name!r}: the block size {parts[1]!r} is no "
                                 f"whole number; allowed: a power of two from 1 to 1024 "
                                 f"({prefix}VARIANT[:BLOCK[:OP]])")
            try:
                target = make(parts[0], *(int(parts[1]),) if len(parts) > 1 else (),
                              **({"op": built} if built else {}))
            except ValueError as exc:  # which target the variant, block or operator is of
                raise ValueError(f"target {name!r}: {exc}") from None
    if target is None and (name.startswith("cu:") or name.endswith(".cu")):
        path, size = name, block
        if name.startswith("cu:"):
            parts = name[3:].rsplit(":", 1)
            path, size = parts[0], int(parts[1]) if len(parts) > 1 else block
        # Its kernels are compiled for the spec's dtypes: the merged spec, before compiling.
        return cuda_file_target(path, size, with_overrides(spec or TargetSpec(device="gpu"),
                                                           overrides, name))
    imported = False
    if target is None:
        if name.startswith("import:"):
            name = name[len("import:"):]
        if ":" not in name:
            raise ValueError(_unknown_target(name, builtin_tables.names()))
        target = load_import_path(name, spec)
        imported = True
    merged = with_overrides(target.spec, overrides, target.name) if overrides else target.spec
    if imported:
        _check_callable_as(target.fn, merged, name)
    elif merged.axis != target.spec.axis:
        raise ValueError(_fixed_axis(target.name, target.spec.axis, merged.axis))
    if kernel and not set(merged.dtypes) <= set(target.spec.dtypes):
        # A model is held to its kernel's types: it is checked as what the kernel computes.
        extra = [d for d in merged.dtypes if d not in target.spec.dtypes]
        raise ValueError(f"--dtypes {' '.join(extra)}: {target.name}'s kernels are built for "
                         f"{', '.join(target.spec.dtypes)} under {merged.op}; allowed: any of "
                         f"those")
    # Every dtype a check may hand the target made now, as the whole table of built-ins
    # once made them here: ml_dtypes' bfloat16 takes about 0.9 s to load on a 2-core CPU,
    # which the first property's budget would otherwise spend.
    for dtype in DTYPES:
        as_dtype(dtype)
    unavailable = target.unavailable
    # A GPU scan of the user's own, or one the overrides made: CuPy and a GPU are this
    # machine's to give, and their absence no verdict on the target.
    if merged.device == "gpu" and (imported or target.spec.device != "gpu") and not unavailable:
        unavailable = not_installed("cupy") or no_gpu()
    if merged is target.spec and unavailable == target.unavailable:
        return target
    return replace(target, spec=merged, unavailable=unavailable)
