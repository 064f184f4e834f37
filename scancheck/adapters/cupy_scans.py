"""CuPy's scans, enumerated from their modes: ``cumsum`` and ``cumprod`` with CuPy's CUB
accelerator on and off, on contiguous input (1-D whole, or along an axis of an N-D one) and
on a strided 1-D view; and ``cumsum`` without ``dtype=``.

CuPy is imported when a target is called; where it or a GPU is missing the targets are
listed unavailable, saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.dtypes import DTYPES
from ..engine.diagnosis import Cause
from ..targets.spec import TargetSpec
from .known import KnownBug, Symptom
from .numpy_stdlib import NUMPY_PROMOTE, PROMOTED
from .rows import Row, modes, told

#: CuPy has no bfloat16.
CUPY_DTYPES = tuple(d for d in DTYPES if d != "bfloat16")
_NO_CUB = "from cupy._core import _accelerator\n_accelerator.set_routine_accelerators([])\n"


def cupy_scan(name: str, accelerators: list[str] | None, strided: bool = False,
              keep_dtype: bool = True) -> Callable[..., Any]:
    """cupy.<name> (cumsum, cumprod) with these routine accelerators (None: CuPy's default):
    over the whole of a 1-D array (CUB's device-wide scan, where "cub" is on), or along an
    axis of an N-D one (CuPy's own kernel either way); ``strided``: the 1-D input handed as
    every other element of an array twice its length; in the input's dtype where
    ``keep_dtype``, else in CuPy's default."""
    def run(x: Any, axis: int | None = None) -> Any:
        import cupy as cp
        from cupy._core import _accelerator

        saved = _accelerator.get_routine_accelerators()
        if accelerators is not None:
            _accelerator.set_routine_accelerators(accelerators)
        try:
            if strided:
                x = cp.repeat(x, 2)[::2]
            # A 1-D array goes whole (axis=None): CuPy's path for it, CUB's where it is on.
            return getattr(cp, name)(x, axis=None if x.ndim == 1 else axis,
                                     dtype=x.dtype if keep_dtype else None)
        finally:
            _accelerator.set_routine_accelerators(saved)

    return run


def _row(mode: dict[str, Any]) -> Row:
    api, cub, strided = mode["api"], mode["accelerator"] == "CUB", mode["layout"] == "strided"
    op = "add" if api == "cumsum" else "mul"
    tags = ["CUB" if cub else "no CUB", *(["strided"] if strided else [])]
    name = f"cupy.{api} ({', '.join(tags)})"
    imports = "import cupy as cp\n" + ("" if cub else _NO_CUB)
    arg = "cp.asarray(np.repeat(x, 2))[::2]" if strided else "cp.asarray(x)"
    axis = "" if strided else ", axis=None if x.ndim == 1 else AXIS"
    call = f"cp.{api}({arg}{axis}, dtype=x.dtype).get()"
    # Measured on an H100: CUB's single-pass scan returns float bits that vary from run to
    # run (cumsum 2026-11-22; cumprod 2026-11-27: 48 distinct outputs of 50 runs of one input
    # of 41,027 elements, 1 without CUB; docs/findings.md): declared so wherever CUB is on.
    # CuPy's own kernel, taken without CUB and along an axis whatever the accelerator, is
    # compiled with -ftz=true (cupy#9576): float32 subnormals read as zero (a flush allowed,
    # not required).  cumsum through CUB is checked on 1-D arrays alone, the call users make
    # for CUB's device-wide scan.
    own_kernel = not cub or strided or api == "cumprod"
    spec = TargetSpec(op=op, device="gpu", dtypes=CUPY_DTYPES, deterministic=not cub,
                      axis=None if strided or (cub and api == "cumsum") else "arg",
                      subnormals=("flush:float32" if api == "cumprod" else "flush")
                      if own_kernel else "keep")
    if cub and api == "cumsum" and not strided:
        call = "cp.cumsum(cp.asarray(x), dtype=x.dtype).get()  # CuPy's CUB path"
    return Row(name, cupy_scan(api, ["cub"] if cub else [], strided), spec, needs=("cupy",),
               gpu=True, call=(imports, call), api=f"cupy.{api}", mode=told(mode),
               variant=strided or (api, cub) == ("cumprod", False))


#: The mode product of CuPy's scans.
MODES = {"api": ("cumsum", "cumprod"), "accelerator": ("CUB", "no CUB"),
         "layout": ("contiguous", "strided")}

ROWS: tuple[Row, ...] = (
    *(_row(m) for m in modes(MODES)),
    Row("cupy.cumsum (default dtype)", cupy_scan("cumsum", [], keep_dtype=False),
        TargetSpec(device="gpu", dtypes=PROMOTED, promote=NUMPY_PROMOTE, axis="arg"),
        needs=("cupy",), gpu=True, api="cupy.cumsum", mode=(("dtype", "default"),),
        call=("import cupy as cp\n" + _NO_CUB,
              "cp.cumsum(cp.asarray(x), axis=None if x.ndim == 1 else AXIS).get()")),
)

#: Old names of rows, kept working.
ALIASES = {"cupy.cumprod": "cupy.cumprod (CUB)"}

#: CuPy's bugs that its targets' checks meet or met (docs/findings.md).
KNOWN: tuple[KnownBug, ...] = (
    KnownBug("cupy/cupy#10268", "https://github.com/cupy/cupy/issues/10268",
             "cupy.cumsum and cupy.cumprod along an axis are wrong on batches of 2**32 - 1 "
             "elements and more", "cupy", ("cupy-cuda13x", "cupy-cuda12x", "cupy"), "14.1.0", None,
             ("cupy.cumsum (no CUB)", "cupy.cumprod (CUB)", "cupy.cumprod (no CUB)",
              "cupy.cumsum (default dtype)"),
             (Symptom("batch past 2**32", Cause.INDEX_OVERFLOW),),
             "closed: fixed by cupy/cupy#10283, in no release tried here (14.2.0 has it)",
             "docs/findings/cupy_cumsum_rows_past_2_32.py", gpu=True),
    KnownBug("cupy/cupy#9576", "https://github.com/cupy/cupy/issues/9576",
             "CuPy's own scan kernel reads float32 subnormals as zero (-ftz=true): declared by "
             "the targets that take it", "cupy", ("cupy-cuda13x", "cupy-cuda12x", "cupy"),
             "13.0.0", None, (), (), "open", "docs/findings/cupy_cumsum_ftz.py", gpu=True),
    KnownBug("cupy-1d-axis0-past-2-31", None,
             "cupy.cumsum of a 1-D array with axis=0 faults past 2**31 elements (axis=None "
             "does not)", "cupy", ("cupy-cuda13x", "cupy-cuda12x", "cupy"), "14.2.0", None, (), (),
             "not reported as such: it is the batch scan of cupy/cupy#10268 (rows of 2**31 "
             "elements and more here), whose fix cupy/cupy#10283 is in no release tried here",
             "docs/findings/cupy_cumsum_1d_axis0_past_2_31.py", gpu=True),
    KnownBug("cupy-negzero-fill", None, "CuPy stores +0.0 when given the scalar -0.0", "cupy",
             ("cupy-cuda13x", "cupy-cuda12x", "cupy"), "14.2.0", None, (), (),
             "not reported as an issue: ndarray.fill memsets a value equal to zero, its sign "
             "noted and accepted in review (chainer/chainer#1435)",
             "docs/findings/cupy_negzero_fill.py", gpu=True),
)
