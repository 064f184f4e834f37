"""Broken scans of N-D inputs and of scans from an initial value (:mod:`scancheck.controls`),
each with the spec it declares: strides and axes read wrongly, rows carried into each other,
indices counted across rows, an initial value reaching too few outputs, and CuPy's row
offsets kept in 32 bits.  Each is wrong in one way that one check of scancheck, and no
weaker one, must catch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..targets.spec import TargetSpec
from .sums import BLOCK

_FLOATS = ("float32", "float64")

def strides_ignored(x: np.ndarray, axis: int) -> np.ndarray:
    """An N-D scan along ``axis`` that reads its input as if it were C-contiguous from its
    data pointer (a kernel indexing ``row * n + i``): right on C-contiguous arrays, wrong on
    transposed, strided, reversed and Fortran-order views."""
    with np.errstate(all="ignore"):
        return np.cumsum(read_as_c_contiguous(x), axis=axis, dtype=x.dtype)


def reverse_strides_ignored(x: np.ndarray, axis: int) -> np.ndarray:
    """:func:`strides_ignored` as a reverse scan (each output the sum from it to the row's
    end): right on C-contiguous arrays only."""
    misread = np.flip(read_as_c_contiguous(x), axis)
    with np.errstate(all="ignore"):
        return np.flip(np.cumsum(misread, axis=axis, dtype=x.dtype), axis)


def leading_axis_restored_in_c_order(x: np.ndarray, axis: int) -> np.ndarray:
    """A scan along axis 0 of a 3-D input that flattens the two trailing axes in Fortran
    order and puts the result back in C order: each value is a right row scan's, at the
    place of another column wherever both trailing axes are longer than 1."""
    with np.errstate(all="ignore"):
        if x.ndim == 3 and axis % 3 == 0:
            flat = np.cumsum(x.reshape(x.shape[0], -1, order="F"), axis=0, dtype=x.dtype)
            return flat.reshape(x.shape)
        return np.cumsum(x, axis=axis, dtype=x.dtype)


def read_as_c_contiguous(x: np.ndarray) -> np.ndarray:
    """What a kernel indexing ``row * n + i`` from ``x``'s data pointer reads: ``x`` itself
    where it is C-contiguous."""
    if x.size == 0 or x.flags.c_contiguous:
        return x
    root = x
    while True:
        base = root.base
        if not isinstance(base, np.ndarray):  # as_strided's wrapper holds the array it views
            base = getattr(base, "base", None)
        if not isinstance(base, np.ndarray):
            break
        root = base
    memory = root.ravel(order="K")  # a contiguous root: its memory, in memory order
    start = (x.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // x.itemsize
    # Past the end of the buffer a kernel would read whatever lies there: here, its start.
    return memory[(start + np.arange(x.size)) % memory.size].reshape(x.shape)


def cumprod_carried_across_rows(x: np.ndarray, axis: int) -> np.ndarray:
    """A batched cumprod that runs over the rows laid end to end and never restarts at a
    row's start (a segmented scan without its segment heads): each row after the first
    carries the product of all rows before it.  Any 1-D input is one row, and right."""
    moved = np.moveaxis(x, axis, -1)
    with np.errstate(all="ignore"):
        flat = np.multiply.accumulate(np.ascontiguousarray(moved).ravel(), dtype=x.dtype)
    return np.moveaxis(flat.reshape(moved.shape), -1, axis)


def cummax_flat_indices(x: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """A batched cummax whose indices count from the start of the batch (a kernel storing
    its global element index), not from the start of each row; its values are right, and
    so is every 1-D input."""
    from ..core.rules import arg_extreme_scan

    moved = np.moveaxis(x, axis, -1)
    values, idx = arg_extreme_scan(moved, "max")
    rows = np.arange(int(np.prod(moved.shape[:-1]))).reshape(moved.shape[:-1] + (1,))
    return np.moveaxis(values, -1, axis), np.moveaxis(idx + rows * moved.shape[-1], -1, axis)


def initial_value_in_the_first_tile_only(x: np.ndarray, initial: Any) -> np.ndarray:
    """An exclusive scan from an initial value whose tiles (of BLOCK) after the first take
    their carry from the tile totals alone: the initial value reaches the first tile's
    outputs and no others.  With the identity as initial value it is right."""
    out = np.zeros_like(x)
    with np.errstate(all="ignore"):
        out[1:] = np.add.accumulate(x[:-1], dtype=x.dtype)
        out[:BLOCK] += x.dtype.type(initial)
    return out


def negative_axis_from_the_front(x: np.ndarray, axis: int) -> np.ndarray:
    """An N-D sum along ``axis`` that takes a negative axis as counted from the front
    (-1 as 0, -2 as 1): right wherever the axis comes as a non-negative number."""
    with np.errstate(all="ignore"):
        return np.cumsum(x, axis=-axis - 1 if axis < 0 else axis, dtype=x.dtype)


def first_axis_whatever_the_axis(x: np.ndarray, axis: int) -> np.ndarray:
    """An N-D sum that scans axis 0 whatever axis it is given (the argument read and
    dropped): right on 1-D input and wherever axis 0 is asked for."""
    with np.errstate(all="ignore"):
        return np.cumsum(x, axis=0, dtype=x.dtype)


def first_axis_declared_last(x: np.ndarray) -> np.ndarray:
    """A sum of 2-D arrays only, declared along their last axis (as ``DataFrame.cumsum(axis=1)``
    is), that scans axis 0: a 1-D case reaches it as one row of shape (1, n), which it
    returns unchanged."""
    with np.errstate(all="ignore"):
        return np.cumsum(x, axis=0, dtype=x.dtype)


def flattened_whatever_the_axis(x: np.ndarray, axis: int) -> np.ndarray:
    """An N-D sum that scans its input flattened in C order whatever axis it is given
    (``numpy.cumsum`` without its axis): a 1-D answer of the input's size, right on 1-D
    input."""
    with np.errstate(all="ignore"):
        return np.cumsum(x, dtype=x.dtype)


def saturating_along_an_axis(x: np.ndarray, axis: int) -> np.ndarray:
    """A sum right on 1-D input whose N-D path stores with saturation (PTX's
    ``cvt.satfinite``): a prefix that overflows comes back as the largest finite float, an
    infinity in the input still as infinity."""
    with np.errstate(all="ignore"):
        out = np.cumsum(x, axis=axis, dtype=x.dtype)
        if x.ndim == 1 or not np.issubdtype(x.dtype, np.floating):
            return out
        infinite = np.logical_or.accumulate(np.isinf(x), axis=axis)
    top = np.finfo(x.dtype).max
    return np.where(np.isinf(out) & ~infinite, np.copysign(top, out), out).astype(x.dtype)


def negative_axis_refused(x: np.ndarray, axis: int) -> np.ndarray:
    """An N-D sum that raises on a negative axis, as a kernel whose launcher checks
    ``0 <= axis < ndim`` before it normalises the axis: right on every axis from 0 up."""
    if axis < 0:
        raise IndexError(f"axis {axis} is out of range [0, {x.ndim})")
    with np.errstate(all="ignore"):
        return np.cumsum(x, axis=axis, dtype=x.dtype)


def initial_value_from_the_last_element(x: np.ndarray, initial: Any) -> np.ndarray:
    """An exclusive scan from an initial value that never reads it: its inputs rolled one
    place right, so that its start is ``x[-1]`` (a wrap-around), the element an exclusive
    scan never reads otherwise."""
    with np.errstate(all="ignore"):
        return np.add.accumulate(np.roll(x, 1), dtype=x.dtype)


def row_offsets_in_32_bits(x: Any, axis: int) -> Any:
    """CuPy: a batched cumsum whose row offsets (row * row length) are unsigned 32-bit
    products: past 2**32 elements a row along the last axis scans the elements at its
    offset modulo 2**32.  Every batch below 2**32 elements is right, and so is every 1-D
    input (one row, offset 0) and every scan along another axis."""
    import cupy as cp

    out = cp.cumsum(x, axis=None if x.ndim == 1 else axis, dtype=x.dtype)
    m = x.shape[-1] if x.ndim else 0
    if x.ndim < 2 or axis % x.ndim != x.ndim - 1 or not x.flags.c_contiguous or not m:
        return out
    rows, first = x.size // m, -(-2**32 // m)
    if rows <= first:
        return out
    wrapped = (cp.arange(first, rows, dtype=cp.int64) * m) % 2**32
    out.reshape(rows, m)[first:] = cp.cumsum(x.ravel()[wrapped[:, None] + cp.arange(m)], axis=1,
                                             dtype=x.dtype)
    return out


for fn, spec in (
    (strides_ignored, TargetSpec(axis="arg")),
    (leading_axis_restored_in_c_order, TargetSpec(axis="arg")),
    (reverse_strides_ignored, TargetSpec(axis="arg", reverse=True)),
    (initial_value_in_the_first_tile_only, TargetSpec(inclusive=False, initial=True)),
    (initial_value_from_the_last_element, TargetSpec(inclusive=False, initial=True)),
    (negative_axis_from_the_front, TargetSpec(axis="arg")),
    (first_axis_whatever_the_axis, TargetSpec(axis="arg", dtypes=("int32", "float32"))),
    (flattened_whatever_the_axis, TargetSpec(axis="arg", dtypes=("int32", "float32"))),
    (negative_axis_refused, TargetSpec(axis="arg")),
    (saturating_along_an_axis, TargetSpec(axis="arg", dtypes=("float32",))),
    (cumprod_carried_across_rows, TargetSpec(op="mul", dtypes=_FLOATS, axis="arg")),
    (cummax_flat_indices, TargetSpec(op="max", dtypes=(*_FLOATS, "int32"), axis="arg",
                                     indices=True)),
    # cupy.cumsum through CUB: float bits vary from run to run (see targets.builtin_targets).
    # CuPy's own scan kernel, which flushes float32 subnormals (see targets.builtin_targets).
    (row_offsets_in_32_bits, TargetSpec(device="gpu", dtypes=("float32", "int32"), axis="arg",
                                        deterministic=False, subnormals="flush")),
):
    fn.scan_spec = spec  # type: ignore[attr-defined]
