"""Batches past 2**32 elements: short rows, far more than 65535 of them, along either axis.

A target that takes an axis is handed 2**32 + 17 elements in rows of :data:`BATCH_ROW`, as a
(rows, 3) array scanned along its rows and as its (3, rows) transpose scanned along its
columns; every output is checked, where the target runs, against a running combination
taken a column at a time (no scan of ours).  A wrong output that the same layout of
:data:`BATCH_BELOW` elements does not show is an error that needs a batch past 2**31
elements (a 32-bit size, offset or product of dimension sizes); the device is held and
its memory checked as for the other checks past 2**31 (:mod:`scancheck.engine.large`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.operators import get_operator
from ..targets.target import Target
from .diagnosis import Cause, PropertyResult, Reason, is_resource_error
from .large import large_dtype, one_at_a_time, room, unlockable

#: The batched check past 2**32 elements: short rows, far more than 65535 of them.
BATCH_CHECKS: dict[str, int] = {"batch past 2**32": 2**32 + 17}
#: Row length of the batched check: short and odd, so that rows straddle every power of two.
BATCH_ROW = 3
#: Arrays a batched check needs: input, output, and one running row and its test.
_BATCH_HEADROOM = 3.0
#: Where a failing batch is tried again: below 2**31 elements, no 32-bit offset overflows.
BATCH_BELOW = 2**31 - 1


def batch_layouts(total: int, axis: int | str | None) -> list[tuple[tuple[int, int], int]]:
    """(shape, scanned axis) of the batches of at least ``total`` elements in rows of
    :data:`BATCH_ROW`: rows along the last axis (contiguous) and along the first (strided,
    as many columns as rows), those a target of fixed ``axis`` takes."""
    rows = -(-total // BATCH_ROW)
    both = [((rows, BATCH_ROW), 1), ((BATCH_ROW, rows), 0)]
    if axis == "arg":
        return both
    return [(shape, a) for shape, a in both if isinstance(axis, int) and axis % 2 == a]


def batch_data(shape: tuple[int, int], dtype: str, op: str, seed: int, xp: Any = np) -> Any:
    """Values whose every combination along a row of :data:`BATCH_ROW` is exact in ``dtype``:
    integers in [-4, 4] (sums, max, min), or +-1 and +-2 (products)."""
    rs = xp.random.RandomState(seed)
    if get_operator(op).family == "product":
        v = xp.asarray(np.array([1, -1, 2, -2], dtype=dtype))
        return v[rs.randint(0, 4, size=shape, dtype=np.int8)]
    return rs.randint(-4, 5, size=shape, dtype=np.int8).astype(dtype)  # int8: a quarter the bytes


def _combine(op: str, xp: Any) -> Callable[[Any, Any], Any]:
    return getattr(xp, get_operator(op).ufunc.__name__)


def batch_test(target: Target, x: Any, axis: int) -> tuple[int, int, Any, Any] | None:
    """Run the target on the batch ``x`` (where the target runs) along ``axis``: None if every
    output is right, else the first wrong (row, index in the row, got, expected), each
    column of outputs checked against a running combination without a scan of ours."""
    from ..core.arrays import array_module

    spec, xp = target.spec, array_module(x)
    out = target.run(x, axis)
    values = out[0] if spec.indices else out
    if xp is not np:
        from ..oracle.exact_device import as_device_array

        values = as_device_array(values)
    values = xp.asarray(values)
    want_dtype = spec.output_dtype(x.dtype)
    if values.shape != x.shape or values.dtype.name != want_dtype:
        raise ValueError(f"returned shape {values.shape} dtype {values.dtype} for a batch of "
                         f"shape {x.shape} dtype {x.dtype} (expected dtype {want_dtype})")
    xs, gs = xp.moveaxis(x, axis, -1), xp.moveaxis(values, axis, -1)
    combine = _combine(spec.op, xp)
    running = None
    for k in range(xs.shape[-1]):
        col = xs[..., k].astype(want_dtype)
        prev = running
        running = col if running is None else combine(running, col)
        if spec.inclusive:
            want = running
        else:
            want = prev if prev is not None else xp.full(col.shape, get_operator(
                spec.op).identity(want_dtype)[()], dtype=want_dtype)
        bad = gs[..., k] != want
        if bool(bad.any()):
            r = int(xp.argmax(bad))
            return r, k, gs[r, k].item(), want[r].item()
    return None


def _batch_dtype(target: Target) -> str | None:
    """The dtype of :func:`large_dtype`, for an operator whose batch data are exact in it."""
    return large_dtype(target) if target.spec.family in ("sum", "product", "order") else None


def check_batch(target: Target, name: str = "batch past 2**32",
                on_step: Callable[[int], None] | None = None) -> PropertyResult:
    """Batches of more than 2**32 elements in rows of 3 (more than a billion rows, along
    either axis): every output against a running combination.  Where one is wrong and the
    same shape below 2**31 elements is right, the cause is a 32-bit offset or product of
    dimension sizes."""
    spec = target.spec
    total = BATCH_CHECKS[name]
    if spec.axis is None:
        return PropertyResult(name, "skip", "the target scans 1-D arrays (its spec has no axis)")
    if spec.ndim and 2 not in spec.ndim:
        return PropertyResult(name, "skip", f"the batches are 2-D; the target takes ranks "
                              f"{', '.join(map(str, spec.ndim))} (its spec's ndim)")
    dtype = _batch_dtype(target)
    layouts = batch_layouts(total, spec.axis)
    if dtype is None or not layouts:
        return PropertyResult(name, "skip", "needs an add, mul, max or min scan of a 4- or "
                              "8-byte dtype (or of an integer type it widens) over axis 0 or "
                              "1 of a 2-D array")
    xp = np
    if spec.device == "gpu":
        import cupy as xp
    detail: dict[str, Any] = {"n": total, "dtype": dtype}
    not_run = []
    refused = unlockable()
    if refused:  # not a verdict on the target
        return PropertyResult(name, "skip", f"not run: {refused}")
    with one_at_a_time(target):
        for shape, axis in layouts:
            short = room(target, shape[0] * shape[1], dtype, _BATCH_HEADROOM)
            if short:
                not_run.append(detail.setdefault(f"shape {list(shape)}", f"not run: {short}"))
                continue
            if on_step is not None:
                on_step(shape[0] * shape[1])
            try:
                x = batch_data(shape, dtype, spec.op, 0, xp)
                wrong = batch_test(target, x, axis)
            except Exception as exc:
                if is_resource_error(exc):
                    not_run.append(detail.setdefault(
                        f"shape {list(shape)}", f"not run: out of memory ({str(exc)[:120]})"))
                    continue
                raise
            finally:
                x = None
            if wrong is None:
                detail[f"shape {list(shape)}"] = "right"
                continue
            return _batch_verdict(target, name, shape, axis, dtype, wrong, xp)
    if len(not_run) == len(layouts):
        return PropertyResult(name, "skip", "; ".join(not_run))
    return PropertyResult(name, "pass", detail=detail)


def _batch_verdict(target: Target, name: str, shape: tuple[int, int], axis: int, dtype: str,
                   wrong: tuple[int, int, Any, Any], xp: Any) -> PropertyResult:
    """A failing batch told: an error that needs more than 2**31 elements (an index overflow)
    if the same layout of :data:`BATCH_BELOW` elements is right, else a logic error."""
    r, k, got, want = wrong
    element = r * BATCH_ROW + k if axis == 1 else k * shape[1] + r  # its place in memory
    total = shape[0] * shape[1]
    small = BATCH_BELOW // BATCH_ROW
    small_shape = (small, BATCH_ROW) if axis == 1 else (BATCH_ROW, small)
    right_below = not room(target, BATCH_BELOW, dtype, _BATCH_HEADROOM) and batch_test(
        target, batch_data(small_shape, dtype, target.spec.op, 0, xp), axis) is None
    case = {"shape": list(shape), "axis": axis, "dtype": dtype, "row": r, "index": k, "got": got,
            "expected": want, "data": f"scancheck.engine.large_batches.batch_data({tuple(shape)}, {dtype!r}, "
                                      f"{target.spec.op!r}, 0)"}
    where = f"row {r:,} of shape {list(shape)} (axis {axis}, element {element:,} of the batch)"
    if right_below:
        return PropertyResult(name, "fail", f"wrong at {where}, right on the same layout of "
                              f"{small * BATCH_ROW:,} elements: an error that needs a batch past "
                              f"2**31 elements (a 32-bit size, offset or product of dimension "
                              f"sizes)", case, {"n": total}, cause=Cause.INDEX_OVERFLOW.name,
                              reason=Reason.WRONG_VALUE.name)
    return PropertyResult(name, "fail", f"wrong at {where}, and on {small * BATCH_ROW:,} "
                          f"elements too: an error of many rows, not of 32-bit sizes", case,
                          {"n": total}, cause=Cause.LOGIC.name,
                          reason=Reason.WRONG_VALUE.name)
