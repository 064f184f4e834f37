"""PyTorch's scans, enumerated from their modes, each with its contract and plain call:

* ``torch.cumsum``, ``cumprod``, ``logcumsumexp``, ``cummax`` and ``cummin`` on CPU and CUDA
  tensors, eager and under ``torch.compile``, with and without
  ``torch.use_deterministic_algorithms(True)`` (:data:`CUM_MODES`); cumsum and cumprod
  without ``dtype=`` too.
* ``torch._higher_order_ops.associative_scan.associative_scan(combine_fn, xs, dim,
  reverse=, combine_mode=)`` in every combine_mode, eager and compiled (static or dynamic
  shapes), forward and reverse (torch flips the data, scans and flips back:
  ``reverse='flip'``), on CPU and CUDA tensors (:data:`ASSOCIATIVE_MODES`; torch refuses
  ``'pointwise'`` on CPU tensors, listed so).  Each takes the combine
  (``TargetSpec(combine=True)``) and is driven by scancheck's probe monoids, whose combines
  run on torch tensors as they are (:func:`to_torch` carries their leaves).
* The segmented sum as torch's associative scan of (flag, value) pairs (``segments='flags'``).

Every torch or CUDA import is made when a target is called, so that this module loads
anywhere; where torch or a GPU is missing the targets are listed unavailable, saying why.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..core.dtypes import KERNEL_DTYPES
from ..core.monoids import Leaves, Monoid
from ..engine.diagnosis import Cause
from ..targets.spec import TargetSpec
from ..targets.target import PerCombine, Witness, tupled
from .known import KnownBug, Symptom
from .numpy_stdlib import PROMOTED
from .rows import Row, modes, told

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


def torch_associative(mode: str, reverse: bool, device: str, compiled: bool = False,
                      dynamic: bool = True) -> Callable[..., Leaves]:
    """torch's ``associative_scan`` of the combine along an axis in ``combine_mode=mode``,
    eager or under ``torch.compile`` (``compiled``: one compiled function per combine and
    axis, shapes ``dynamic`` or each n compiled anew), on ``device`` tensors, ``reverse`` as
    torch defines it."""
    def compile_scan(combine: Callable, axis: int) -> Any:
        import torch
        from torch._higher_order_ops.associative_scan import associative_scan

        _compile_limits()
        fn = tupled(combine)

        def scan(xs: Any) -> Any:
            return associative_scan(fn, xs, axis, reverse=reverse, combine_mode=mode)

        # dynamic: one graph for every n (but 1), where each new n would compile anew until
        # torch marked n dynamic itself.
        return torch.compile(scan, fullgraph=True, dynamic=dynamic)

    per_combine = PerCombine(compile_scan)

    def run(elems: Leaves, combine: Callable, axis: int = 0) -> Leaves:
        from torch._higher_order_ops.associative_scan import associative_scan

        monoid = getattr(combine, "monoid", None)
        xs = to_torch(monoid, elems, device)
        if compiled:
            out = per_combine(combine, axis)(xs)
        else:
            out = associative_scan(tupled(combine), xs, axis, reverse=reverse, combine_mode=mode)
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


@contextlib.contextmanager
def deterministic_algorithms(on: bool) -> Iterator[None]:
    """torch.use_deterministic_algorithms(True) for the block where ``on``, the setting
    before it restored after."""
    if not on:
        yield
        return
    import torch

    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was)


def torch_op(name: str, cuda: bool, keep_dtype: bool = True, deterministic: bool = False,
             compiled: bool = False) -> Callable[..., Any]:
    """torch.<name> (cumsum, cumprod, logcumsumexp, cummax, cummin) over a dim, in the input's
    dtype (cumsum and cumprod in torch's default where not ``keep_dtype``), under
    ``torch.use_deterministic_algorithms(True)`` where ``deterministic``, eager or under
    ``torch.compile`` (dynamic shapes): on CPU tensors sharing the NumPy array's memory and
    strides (bfloat16 through its bits), or on CUDA tensors sharing the CuPy array's (DLPack
    both ways, no copy: checks past 2**32 elements stay on the GPU)."""
    def eager(t: Any, axis: int) -> Any:
        import torch

        fn = getattr(torch, name)
        if name in ("cummax", "cummin"):
            return tuple(fn(t, axis))
        keep = keep_dtype and name != "logcumsumexp"
        return fn(t, axis, dtype=t.dtype) if keep else fn(t, axis)

    functions: dict[int, Any] = {}

    def call(t: Any, axis: int) -> Any:
        with deterministic_algorithms(deterministic):
            if not compiled:
                return eager(t, axis)
            if axis not in functions:
                import torch

                _compile_limits()
                functions[axis] = torch.compile(lambda v: eager(v, axis), dynamic=True)
            return functions[axis](t)

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


_TORCH_DTYPE = "dtype=torch.from_numpy(x[:0].copy()).dtype"


def torch_call(name: str, cuda: bool, keep: bool = True, deterministic: bool = False,
               compiled: bool = False) -> tuple[str, str]:
    """The plain torch call of :func:`torch_op` with the same arguments, on ``x``."""
    t = "torch.from_numpy(x.copy())" + (".cuda()" if cuda else "")
    back = ".cpu().numpy()" if cuda else ".numpy()"
    imports = "import torch\n" + ("torch.use_deterministic_algorithms(True)\n"
                                  if deterministic else "")
    if name in ("cummax", "cummin"):
        scan = f"lambda t: tuple(torch.{name}(t, AXIS))"
        out = "tuple(v{back} for v in {fn}({t}))"
    else:
        dtype = ", dtype=t.dtype" if keep and name != "logcumsumexp" else ""
        scan = f"lambda t: torch.{name}(t, AXIS{dtype})"
        out = "{fn}({t}){back}"
    if not compiled:  # the eager call as users write it
        if name in ("cummax", "cummin"):
            return imports, f"tuple(v{back} for v in torch.{name}({t}, AXIS))"
        dtype = f", {_TORCH_DTYPE}" if keep and name != "logcumsumexp" else ""
        return imports, f"torch.{name}({t}, AXIS{dtype}){back}"
    fn = f"torch.compile({scan}, dynamic=True)"
    return imports, out.format(fn=fn, t=t, back=back)


_TORCH_HALVES = ("float16", "bfloat16")
#: torch's scans: function -> (operator, dtypes, further spec).  torch 2.13 has no CPU
#: cumsum or cumprod for uint16, uint32 or uint64.
_TORCH_SCANS: dict[str, tuple[str, tuple[str, ...], dict[str, Any]]] = {
    "cumsum": ("add", (*KERNEL_DTYPES, *_TORCH_HALVES, "int8", "int16", "uint8"), {}),
    "cumprod": ("mul", (*KERNEL_DTYPES, *_TORCH_HALVES, "int8", "int16", "uint8"), {}),
    "logcumsumexp": ("logaddexp", ("float32", "float64", *_TORCH_HALVES), {}),
    "cummax": ("max", (*KERNEL_DTYPES, *_TORCH_HALVES, "int8", "int16", "uint8", "bool"),
               {"indices": True}),
    "cummin": ("min", (*KERNEL_DTYPES, *_TORCH_HALVES, "int8", "int16", "uint8", "bool"),
               {"indices": True}),
}
#: The mode product of torch's cumulative functions.
CUM_MODES = {"api": tuple(_TORCH_SCANS), "device": ("CPU", "CUDA"),
             "execution": ("eager", "compiled"), "deterministic": (False, True)}


def _cum_row(mode: dict[str, Any]) -> Row:
    api, cuda = mode["api"], mode["device"] == "CUDA"
    compiled, det = mode["execution"] == "compiled", mode["deterministic"]
    op, dtypes, extra = _TORCH_SCANS[api]
    tags = [mode["device"], *(["compiled"] if compiled else []),
            *(["deterministic"] if det else [])]
    # On CUDA the bits of every one of them vary from run to run (measured on an H100,
    # 2026-11-22), except cumsum under use_deterministic_algorithms(True), which torch
    # documents as deterministic.  Compiled: 1-D, one graph per dtype (n dynamic).
    spec = TargetSpec(op=op, dtypes=dtypes, device="gpu" if cuda else "cpu",
                      axis=None if compiled else "arg",
                      deterministic=not cuda or (det and api == "cumsum"),
                      max_n=2**16 if compiled else None, **extra)
    return Row(f"torch.{api} ({', '.join(tags)})", torch_op(api, cuda, True, det, compiled),
               spec, needs=("torch",), gpu=cuda, call=torch_call(api, cuda, True, det, compiled),
               api=f"torch.{api}", mode=told(mode), variant=compiled or det)


#: Without dtype=: bool and narrow integers come back as int64.
_TORCH_PROMOTE = tuple((d, "int64") for d in (*PROMOTED, "uint64"))


def _default_dtype_row(api: str, device: str) -> Row:
    cuda = device == "CUDA"
    spec = TargetSpec(op="add" if api == "cumsum" else "mul", dtypes=(*PROMOTED, "uint64"),
                      promote=_TORCH_PROMOTE, axis="arg", device="gpu" if cuda else "cpu")
    return Row(f"torch.{api} ({device}, default dtype)", torch_op(api, cuda, False), spec,
               needs=("torch",), gpu=cuda, call=torch_call(api, cuda, keep=False),
               api=f"torch.{api}", mode=(("device", device), ("dtype", "default")))


#: The mode product of torch's associative_scan; shapes are static or dynamic only where
#: it is compiled.
ASSOCIATIVE_MODES = {"combine_mode": ("generic", "pointwise"), "execution": ("eager", "compiled"),
                     "shapes": ("dynamic", "static"), "device": ("CPU", "CUDA"),
                     "reverse": (False, True)}


def _associative_row(mode: dict[str, Any]) -> Row:
    compiled, cuda = mode["execution"] == "compiled", mode["device"] == "CUDA"
    static = compiled and mode["shapes"] == "static"
    tags = [mode["combine_mode"], *(["compiled"] if compiled else []),
            *(["static"] if static else []), mode["device"], *(["reverse"] if mode["reverse"] else [])]
    shown = dict(mode)
    if not compiled:
        shown["shapes"] = "-"
    # torch refuses an empty scan dimension.  Compiled: a graph per combine, dtypes, axis
    # and rank, so 1-D alone, and each n another where shapes are static; eager: any axis.
    spec = TargetSpec(combine=True, axis=None if compiled else "arg", allows_empty=False,
                      max_n=2**7 if static else 2**12, reverse="flip" if mode["reverse"] else False)
    refused = ("torch's combine_mode='pointwise' takes CUDA (or XPU) tensors alone"
               if mode["combine_mode"] == "pointwise" and not cuda else None)
    return Row(f"torch associative_scan ({', '.join(tags)})",
               torch_associative(mode["combine_mode"], mode["reverse"], "cuda" if cuda else "cpu",
                                 compiled, dynamic=not static),
               spec, needs=("torch",), gpu=cuda, api="torch associative_scan",
               mode=told(shown), refused=refused,
               variant=(mode["combine_mode"], mode["execution"], static, cuda) not in (
                   ("generic", "eager", False, False), ("generic", "eager", False, True),
                   ("pointwise", "compiled", False, True)))


def _segmented_row(mode: str, device: str) -> Row:
    how = "generic" if mode == "generic" else "pointwise, compiled"
    return Row(f"torch associative_scan segmented (flags, {how}, {device})",
               torch_segmented(mode, device.lower()),
               TargetSpec(segments="flags", dtypes=KERNEL_DTYPES, max_n=2**14),
               needs=("torch",), gpu=device == "CUDA", api="torch associative_scan (segmented)",
               mode=(("combine_mode", mode), ("device", device)))


ROWS: tuple[Row, ...] = (
    *(_cum_row(m) for m in modes(CUM_MODES)),
    _default_dtype_row("cumsum", "CPU"), _default_dtype_row("cumprod", "CPU"),
    _default_dtype_row("cumsum", "CUDA"),
    *(_associative_row(m) for m in modes(
        ASSOCIATIVE_MODES, keep=lambda m: m["execution"] == "compiled" or m["shapes"] == "dynamic")),
    _segmented_row("generic", "CPU"), _segmented_row("generic", "CUDA"),
    _segmented_row("pointwise", "CUDA"),
)

#: The eager rows: "generic" on either device, "pointwise" (CUDA tensors only).
_EAGER = tuple(f"torch associative_scan ({m}, {d}{r})" for m, d in
               (("generic", "CPU"), ("generic", "CUDA"), ("pointwise", "CUDA"))
               for r in ("", ", reverse"))

#: The integer dtypes narrower than 32 bits that torch's scans take.
_NARROW_INTS = ("int8", "uint8", "int16")

#: torch's bugs that its targets' checks meet or met (docs/findings.md).
KNOWN: tuple[KnownBug, ...] = (
    KnownBug("pytorch/pytorch#137943", "https://github.com/pytorch/pytorch/issues/137943",
             "associative_scan(combine_mode='generic', reverse=True) under torch.compile: "
             "outputs wrong from n = 9 (a min combine)", "torch", ("torch",), "2.5.0", None,
             ("torch associative_scan (generic, compiled, CUDA, reverse)",
              "torch associative_scan (generic, compiled, static, CUDA, reverse)"),
             (Symptom("probe monoids", Cause.LOGIC, empty=False),), "open",
             "docs/findings/torch_associative_scan_compiled_generic_reverse.py", gpu=True,
             # n = 9 under min: wrong in plain torch 2.11 on an H100 and an H200, where the
             # sizes the ladder gives min and max (1, 2, 33, 63) came out right.
             witnesses=tuple(Witness("probe monoids", 9, "int64", "min (uint32)", seed)
                             for seed in range(3))),
    KnownBug("pytorch/pytorch#175430", "https://github.com/pytorch/pytorch/pull/175430",
             "torch.compile(dynamic=True) of cumsum and cumprod of int8, uint8 and int16, and "
             "of cummax and cummin of those and bool, on CUDA: InductorError (select_one "
             "bitcasts a 32-bit sum to the narrow type)", "torch", ("torch",), "2.11.0", None,
             tuple(f"torch.{api} (CUDA, compiled{tag})" for api in ("cumsum", "cumprod",
                   "cummax", "cummin") for tag in ("", ", deterministic")),
             (Symptom("integers exact", Cause.FAULT, (("dtype", _NARROW_INTS),)),
              Symptom("indices", Cause.FAULT, (("dtype", ("bool", *_NARROW_INTS)),))),
             "closed: the fix is merged into trunk; torch 2.11.0 still raises",
             "docs/findings/torch_compile_narrow_int_scan.py", gpu=True),
    KnownBug("pytorch/pytorch#167086", "https://github.com/pytorch/pytorch/issues/167086",
             "torch.cummax on CUDA past 2**32 elements: an illegal memory access on "
             "1,431,655,771 rows of 3 int32 (32-bit offsets in the scans with indices, "
             "cummin's too)", "torch", ("torch",), "2.11.0", None,
             tuple(f"torch.{api} (CUDA{tag})" for api in ("cummax", "cummin")
                   for tag in ("", ", deterministic")),
             (Symptom("batch past 2**32", Cause.FAULT),),
             "open: the fix for the scans with indices, pytorch/pytorch#179160, is not merged "
             "(cumsum's, #167326, is)", "docs/findings/torch_cummax_rows_past_2_32.py", gpu=True),
    KnownBug("torch-empty-batch", None,
             "eager associative_scan on an empty batch: one element short along the scanned "
             "dimension, or a RuntimeError", "torch", ("torch",), "2.11.0", None, _EAGER,
             (Symptom("probe monoids", Cause.LOGIC, empty=True),),
             "not reported as such: pytorch/pytorch#186107 and #186465 report a zero-length "
             "scan dimension (pytorch/pytorch#188348 addresses it), not an empty batch",
             "docs/findings/torch_associative_scan_empty_batch.py"),
    KnownBug("torch-compile-numpy-union", None,
             "torch.compile(fullgraph=True) cannot trace isinstance(x, np.ndarray | np.generic) "
             "written in the traced function", "torch", ("torch",), "2.13.0", None, (), (),
             "not reported upstream", "docs/findings/torch_compile_isinstance_numpy_union.py"),
    KnownBug("pytorch/pytorch#188023", "https://github.com/pytorch/pytorch/issues/188023",
             "torch.from_dlpack of a CuPy array with a negative stride aborts the process",
             "torch", ("torch",), "2.11.0", None, (), (),
             "closed: a RuntimeError instead of the abort on trunk (pytorch/pytorch#188047); "
             "the stride 2**62 - 1 is CuPy's, cupy/cupy#10172 (closed: fixed by cupy/cupy#10228)",
             "docs/findings/torch_from_dlpack_negative_stride.py", gpu=True),
    KnownBug("pytorch/pytorch#180150", "https://github.com/pytorch/pytorch/issues/180150",
             "torch.cumsum and torch.cumprod on CUDA round float16 and bfloat16 partial results "
             "to 16 bits (within the bound: a precision to know, not a wrong answer)", "torch",
             ("torch",), "2.11.0", None, (), (),
             "closed: differences expected; cumprod: pytorch/pytorch#180155 (closed: expected "
             "behavior), #156018 (open)",
             "docs/findings/torch_cuda_half_cumsum.py", gpu=True),
)
