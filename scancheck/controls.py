"""Negative controls: deliberately broken scans that scancheck must catch, each with the
diagnosis it must give.  The CPU ones are NumPy functions; the GPU ones are ``.cu``
targets under ``kernels/controls/`` with the documented ``scan`` signature."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .conformance import PROPERTIES, ConformanceReport, check_isolated
from .kernels import KERNEL_DIR
from .targets import TargetSpec

BLOCK = 64


def _blocked(x: np.ndarray, carry_in: Callable) -> np.ndarray:
    """Scan each block of BLOCK elements, then add what ``carry_in`` says came before it."""
    out = np.empty_like(x)
    offset = x.dtype.type(0)
    for lo in range(0, x.size, BLOCK):
        local = np.add.accumulate(x[lo:lo + BLOCK], dtype=x.dtype)
        out[lo:lo + BLOCK] = local + offset
        offset = carry_in(offset, local, x[lo:lo + BLOCK], out[lo:lo + BLOCK])
    return out


def off_by_one_at_block_boundaries(x: np.ndarray) -> np.ndarray:
    """Each block's offset leaves out the previous block's last element."""
    with np.errstate(all="ignore"):
        return _blocked(x, lambda off, local, xs, outs: outs[-1] - xs[-1])


def dropped_partial_block(x: np.ndarray) -> np.ndarray:
    """n // BLOCK blocks instead of ceil(n / BLOCK): the last partial block never gets its offset."""
    with np.errstate(all="ignore"):
        out = np.add.accumulate(x, dtype=x.dtype)
        full = (x.size // BLOCK) * BLOCK
        if full and full < x.size:
            out[full:] = np.add.accumulate(x[full:], dtype=x.dtype)
        return out


def block_sums_in_the_wrong_order(x: np.ndarray) -> np.ndarray:
    """Recurrence pairs: each block's carry is combined on the wrong side (fine for add)."""
    from .operators import get_operator

    op = get_operator("recurrence")
    out = np.empty_like(x)
    carry = op.identity(x.dtype.name)
    for lo in range(0, x.shape[0], BLOCK):
        acc = op.identity(x.dtype.name)
        for k in range(lo, min(lo + BLOCK, x.shape[0])):
            acc = op.combine(acc, x[k])
            out[k] = op.combine(acc, carry)  # should be combine(carry, acc)
        carry = op.combine(acc, carry)
    return out


def lower_precision_intermediate(x: np.ndarray) -> np.ndarray:
    """Block totals carried in float16: fine for integers, beyond the bound for floats."""
    def carry(off, local, xs, outs):
        return (np.float16(off) + np.float16(local[-1])).astype(x.dtype)

    with np.errstate(all="ignore"):
        if x.dtype.kind in "iu":
            return np.add.accumulate(x, dtype=x.dtype)
        return _blocked(x, carry)


def nan_dropping_max(x: np.ndarray) -> np.ndarray:
    """A running maximum with fmax, which ignores NaN instead of propagating it."""
    with np.errstate(all="ignore"):
        return np.fmax.accumulate(x)


for fn, spec in (
    (off_by_one_at_block_boundaries, TargetSpec()),
    (dropped_partial_block, TargetSpec()),
    (block_sums_in_the_wrong_order, TargetSpec(op="recurrence", dtypes=("float32", "float64"))),
    (lower_precision_intermediate, TargetSpec()),
    (nan_dropping_max, TargetSpec(op="max", dtypes=("float32", "float64"))),
):
    fn.scan_spec = spec  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Control:
    """A broken scan, where it runs, and the words its diagnosis must contain."""

    name: str
    locator: str
    expect: str
    gpu: bool = False
    large: bool = False
    sanitize: tuple[str, ...] = ()
    spec: TargetSpec | None = field(default=None)
    #: The conformance properties to run; all by default.  A control that hangs is checked
    #: on one property (each hang costs a whole timeout); a race, by the sanitizer alone.
    properties: tuple[str, ...] = PROPERTIES

    def check(self, **kwargs: Any) -> tuple[ConformanceReport, bool]:
        """Check this control in child processes (``kwargs`` as :func:`check_isolated`
        takes them); the report, and whether its diagnosis is the expected one."""
        rep = check_isolated(self.locator, self.properties, large=self.large,
                             sanitize=self.sanitize, spec=self.spec, **kwargs)
        return rep, self.expect in rep.diagnosis


_CU = Path(KERNEL_DIR) / "controls"

CONTROLS: tuple[Control, ...] = (
    Control("off-by-one at block boundaries", "scancheck.controls:off_by_one_at_block_boundaries",
            "logic error"),
    Control("last partial block dropped", "scancheck.controls:dropped_partial_block", "logic error"),
    Control("block sums in the wrong order", "scancheck.controls:block_sums_in_the_wrong_order",
            "operand order"),
    Control("intermediate in lower precision", "scancheck.controls:lower_precision_intermediate",
            "precision lost"),
    Control("NaN-dropping max", "scancheck.controls:nan_dropping_max", "NaN"),
    Control("missing barrier", f"cu:{_CU / 'missing_barrier.cu'}:1024", "data race", gpu=True,
            sanitize=("racecheck",), properties=(),
            spec=TargetSpec(device="gpu", max_n=1024, dtypes=("float32", "int32"))),
    Control("32-bit index overflow", f"cu:{_CU / 'index_overflow.cu'}:256", "past 2**31",
            gpu=True, large=True, properties=(),
            spec=TargetSpec(device="gpu", dtypes=("float32", "int32"))),
    Control("deadlock-prone chained scan", f"cu:{_CU / 'chained_in_launch_order.cu'}:256", "hang",
            gpu=True, properties=("integers exact",),
            spec=TargetSpec(device="gpu", dtypes=("int32", "float32"))),
)
