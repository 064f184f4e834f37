"""Triton's scans in one block, enumerated from their modes: ``tl.cumsum`` and
``tl.associative_scan`` of add, max and min, forward and with ``reverse=True``
(:mod:`.triton_kernels`, whose text is also each row's plain reproducer).

Triton and torch are imported when a target is called; where either or a GPU is missing the
targets are listed unavailable, saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..targets.spec import TargetSpec
from .rows import Row, modes, told

#: The kernels' module, carried whole by each reproducer (it imports torch and Triton alone).
_SOURCE = Path(__file__).with_name("triton_kernels.py")
_DTYPES = ("float32", "float64", "float16", "int32", "int64")
_APIS = {"tl.cumsum": ("tl.cumsum", "add"), "tl.associative_scan (add)": ("tl.associative_scan", "add"),
         "tl.associative_scan (max)": ("tl.associative_scan", "max"),
         "tl.associative_scan (min)": ("tl.associative_scan", "min")}


def triton_scan(api: str, op: str, reverse: bool) -> Callable[[Any], Any]:
    """:func:`~scancheck.adapters.triton_kernels.scan` of a CuPy array (through DLPack), its
    result a CuPy array."""
    def run(x: Any) -> Any:
        import cupy as cp
        import torch

        from .triton_kernels import scan

        return cp.from_dlpack(scan(torch.from_dlpack(x.copy()), api, op, reverse))

    return run


def _row(mode: dict[str, Any]) -> Row:
    api, reverse = mode["api"], mode["reverse"]
    call, op = _APIS[api]
    # tl.maximum and tl.minimum leave NaN unspecified by default (propagate_nan=NONE), and
    # the GPU's max and min return the operand that is a number: declared as NaN left out.
    # A reverse scan combines the block's lanes past n (the identity; the kernel keeps one at
    # least) into every output, so an output whose whole suffix is NaN is the identity.
    ignores = op in ("max", "min")
    spec = TargetSpec(op=op, device="gpu", dtypes=_DTYPES, reverse=reverse, max_n=2**12,
                      nans="ignore" if ignores else "propagate",
                      nan_prefix="identity" if ignores and reverse else "nan")
    imports = _SOURCE.read_text() + "\n\nimport numpy as np\n"
    return Row(f"triton {api}{' (reverse)' if reverse else ''}".replace(") (reverse)", ", reverse)"),
               triton_scan(call, op, reverse), spec, needs=("triton", "torch"), gpu=True,
               call=(imports, f"scan(torch.from_numpy(x.copy()).cuda(), {call!r}, {op!r}, "
                              f"{reverse}).cpu().numpy()"),
               api=f"triton.language.{api.split(' ')[0][3:]}", mode=told(mode), variant=True)


#: The mode product of Triton's scans.
MODES = {"api": tuple(_APIS), "reverse": (False, True)}

ROWS: tuple[Row, ...] = tuple(_row(m) for m in modes(MODES))

KNOWN: tuple = ()
