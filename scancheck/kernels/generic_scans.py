"""scancheck's own NumPy scan networks over tuples of arrays under any combine: the built-in
generic targets (:mod:`scancheck.adapters.own`) and the negative controls call them.

Each is called as ``fn(elems, combine)`` or ``fn(elems, combine, axis)``, ``elems`` a tuple
of arrays scanned along the axis, ``combine(a, b)`` elementwise on tuples (``a`` earlier);
an exclusive one starts from ``combine.identity``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Leaves = tuple[Any, ...]


def _take(x: Leaves, idx: Any) -> Leaves:
    return tuple(v[idx] for v in x)


def _put(x: Leaves, idx: Any, vals: Leaves) -> None:
    for v, w in zip(x, vals):
        v[idx] = w


def sequential(elems: Leaves, combine: Callable, axis: int = 0) -> Leaves:
    """The inclusive scan, one combine per element, left to right."""
    x = tuple(np.moveaxis(np.array(v), axis, 0) for v in elems)
    for k in range(1, x[0].shape[0]):
        _put(x, slice(k, k + 1), combine(_take(x, slice(k - 1, k)), _take(x, slice(k, k + 1))))
    return tuple(np.moveaxis(v, 0, axis) for v in x)


def brent_kung(elems: Leaves, combine: Callable, axis: int = 0) -> Leaves:
    """The inclusive Brent-Kung network (up-sweep, then the inclusive down-sweep), any n, no
    identity needed; a level's combines are one vectorised call."""
    x = tuple(np.moveaxis(np.array(v), axis, 0) for v in elems)
    n = x[0].shape[0]
    s = 2
    while s <= n:
        hi = np.arange(s - 1, n, s)
        _put(x, hi, combine(_take(x, hi - s // 2), _take(x, hi)))
        s *= 2
    s //= 2
    while s >= 2:
        hi = np.arange(s - 1 + s // 2, n, s)
        if hi.size:
            _put(x, hi, combine(_take(x, hi - s // 2), _take(x, hi)))
        s //= 2
    return tuple(np.moveaxis(v, 0, axis) for v in x)


def blelloch(elems: Leaves, combine: Callable, axis: int = 0, swap_down: bool = False
             ) -> Leaves:
    """The exclusive Blelloch scan (up-sweep, the root set to ``combine.identity``, the
    down-sweep), n padded with the identity to a power of two.  ``swap_down``: the classic
    bug, each down-sweep combine with its operands swapped (a control)."""
    x0 = tuple(np.moveaxis(np.asarray(v), axis, 0) for v in elems)
    n = x0[0].shape[0]
    if n == 0:
        return tuple(np.array(v) for v in elems)
    size = 1 << (n - 1).bit_length()
    ident = combine.identity
    x = tuple(np.concatenate([v, np.full((size - n, *v.shape[1:]), e, dtype=v.dtype)])
              for v, e in zip(x0, ident))
    s = 2
    while s <= size:
        hi = np.arange(s - 1, size, s)
        _put(x, hi, combine(_take(x, hi - s // 2), _take(x, hi)))
        s *= 2
    _put(x, size - 1, tuple(np.full(v.shape[1:], e, dtype=v.dtype) for v, e in zip(x, ident)))
    s = size
    while s >= 2:
        hi = np.arange(s - 1, size, s)
        lo = hi - s // 2
        left, parent = _take(x, lo), _take(x, hi)
        _put(x, lo, parent)
        # The parent's prefix comes before the left subtree's total.
        _put(x, hi, combine(left, parent) if swap_down else combine(parent, left))
        s //= 2
    return tuple(np.moveaxis(v[:n], 0, axis) for v in x)


def network_scan(net: Any, elems: Leaves, combine: Callable) -> Leaves:
    """A kernel model's combine network (:class:`~scancheck.kernels.network.Network`) run
    over tuples of arrays with ``combine``: every step in its order, a serial step one op at a
    time, padding read from ``combine.identity`` -- the kernel's schedule under any monoid."""
    x = tuple(np.asarray(v) for v in elems)
    mem = tuple(np.zeros((net.size, *v.shape[1:]), dtype=v.dtype) for v in x)
    for m, e, v in zip(mem, combine.identity, x):
        m[net.IDENT] = e
        m[net.IN:net.IN + net.n] = v
    for step in net.steps:
        parts = ([slice(k, k + 1) for k in range(step.dst.size)] if step.serial
                 else [slice(None)])
        for sel in parts:
            b = _take(mem, step.b[sel])
            _put(mem, step.dst[sel], combine(_take(mem, step.a[sel]), b) if step.combine else b)
    return tuple(m[net.OUT:net.OUT + net.n].copy() for m in mem)
