"""Batched inputs for targets that scan an axis of an N-D array: shapes, memory layouts, axes.

A batched case is drawn from a :class:`~scancheck.engine.cases.Case` (n, dtype, data, seed): n is
about the number of elements, and the seed picks the rest, so that the budgeted search,
the ladder and the shrinking of n all carry over unchanged.  Shapes come in classes where
batched scans break -- many short rows, few long rows, singleton and zero-size dimensions,
odd sizes in every dimension -- and the array the target gets is a view with one of the
layouts libraries meet: C or Fortran order, a transpose, a strided or reversed axis, or an
offset into a larger buffer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .cases import Case
from .strategies import generate_data

#: The shape classes, drawn with these weights.
SHAPES: dict[str, float] = {"many short rows": 3, "few long rows": 3, "singleton dims": 2,
                            "odd dims": 2, "zero-size dim": 1}
#: The memory layouts of the view a target is given.
LAYOUTS: tuple[str, ...] = ("C", "F", "transposed", "strided", "reversed", "offset")


@dataclass(frozen=True)
class Batch:
    """One batched input: the view the target gets, the axis it scans, and how it was made."""

    x: np.ndarray
    axis: int
    shape_class: str
    layout: str

    def describe(self) -> dict[str, Any]:
        return {"shape": list(self.x.shape), "axis": self.axis, "layout": self.layout,
                "strides": list(self.x.strides), "shapes": self.shape_class}


def _shape(rng: np.random.Generator, n: int, kind: str, ranks: tuple[int, ...] = ()
           ) -> tuple[list[int], int]:
    """A shape of about n elements (at least one) of this class, and the scanned axis in it;
    of a rank in ``ranks`` where given (else 2 to 4, or one more with a singleton inserted)."""
    rank = int(rng.choice(ranks)) if ranks else int(rng.integers(2, 5))
    axis = int(rng.integers(0, rank))
    if rank == 1:  # one row: only its length varies
        return [max(1, n) | (kind == "odd dims")], 0
    dims = [1] * rank
    if kind == "many short rows":
        dims[axis] = int(rng.integers(1, 9))
    elif kind == "few long rows":
        dims[axis] = max(1, n // int(rng.integers(1, 5)))
    else:
        dims[axis] = max(1, int(round(n ** (1 / rank) * rng.uniform(0.5, 2))))
    rest = max(1, n // dims[axis])
    others = [d for d in range(rank) if d != axis]
    for i, d in enumerate(others):  # split what is left over the other dimensions
        left = len(others) - i
        dims[d] = rest if left == 1 else max(1, int(round(rest ** (1 / left) * rng.uniform(0.5, 2))))
        rest = max(1, rest // dims[d])
    if kind == "singleton dims":
        for d in others[: int(rng.integers(1, len(others) + 1))]:
            dims[d] = 1
        if not ranks:  # a declared rank is kept
            at = int(rng.integers(0, rank + 1))
            dims.insert(at, 1)
            axis += at <= axis
    elif kind == "odd dims":
        dims = [d | 1 for d in dims]
    elif kind == "zero-size dim":
        dims[others[int(rng.integers(0, len(others)))]] = 0
    return dims, axis


def batch(case: Case, axis: int | None = None, fixed_axis: int | None = None,
          data_seed: int | None = None, ranks: tuple[int, ...] = (),
          layout: str | None = None) -> Batch:
    """The batched input of ``case``; ``fixed_axis`` for a target that scans one axis only;
    ``data_seed`` other values in the same shape and layout (the case's seed by default);
    ``ranks`` the ranks the target takes (its spec's ``ndim``; () for any); ``layout`` (of
    :data:`LAYOUTS`) in place of the drawn one, the shape, axis and values kept."""
    if layout is not None and layout not in LAYOUTS:
        raise ValueError(f"layout={layout!r} is unknown; allowed: {', '.join(LAYOUTS)}")
    rng = np.random.default_rng([case.seed, 0xBA7C])
    kinds = list(SHAPES)
    weights = np.array(list(SHAPES.values()))
    kind = kinds[int(rng.choice(len(kinds), p=weights / weights.sum()))]
    dims, drawn_axis = _shape(rng, max(case.n, 1), kind, tuple(ranks))
    drawn = LAYOUTS[int(rng.integers(0, len(LAYOUTS)))]  # drawn either way: the draws after
    layout = drawn if layout is None else layout        # it are the case's own
    rank = len(dims)
    ax = drawn_axis if fixed_axis is None else fixed_axis % rank
    if axis is not None:
        ax = axis % rank
    elif fixed_axis is None and (case.seed >> 1) % 2:
        ax -= rank  # a target taking any axis is handed a negative one half the time
    x = _view(rng, dims, layout, case, case.seed if data_seed is None else data_seed,
              dims[ax])
    return Batch(x, ax, kind, layout)


def _view(rng: np.random.Generator, dims: list[int], layout: str, case: Case, seed: int,
          row: int) -> np.ndarray:
    """An array of shape ``dims`` with values of ``case``'s data for rows ``row`` long,
    laid out as asked."""
    size = int(np.prod(dims))
    values = generate_data(np.random.default_rng(seed), size, case.dtype, case.distribution,
                           row)
    return laid_out(values.reshape(dims), memory_of(rng, layout, len(dims)))


def memory_of(rng: np.random.Generator, layout: str, ndim: int) -> dict[str, Any]:
    """What :func:`laid_out` needs to lay an ``ndim``-array out as ``layout`` (of
    :data:`LAYOUTS`): the axis a strided or reversed layout steps along, the order a
    transposed one keeps its axes in memory, drawn from ``rng``."""
    memory: dict[str, Any] = {"layout": layout}
    if layout == "transposed":
        memory["perm"] = [int(p) for p in rng.permutation(ndim)]
    elif layout in ("strided", "reversed"):
        memory["dim"] = int(rng.integers(0, ndim))
    return memory


def laid_out(x: np.ndarray, memory: dict[str, Any]) -> np.ndarray:
    """``x``'s values, element for element, in the memory layout ``memory`` says
    (:func:`memory_of`): a view into a buffer of its own, which a report rebuilds as it is."""
    layout = memory["layout"]
    if layout == "C":
        return x.copy()
    if layout == "F":
        return np.array(x, order="F")
    if layout == "transposed":
        perm = memory["perm"]
        return np.array(x.transpose(perm), order="C").transpose(np.argsort(perm))
    if layout == "offset":  # one element into the buffer
        buf = np.empty(x.size + 1, x.dtype)
        buf[1:] = x.ravel()
        return buf[1:].reshape(x.shape)
    d = memory["dim"]
    step = (slice(None),) * d
    if layout == "reversed":
        return np.flip(x, d).copy()[step + (slice(None, None, -1),)]
    if layout == "strided":  # every other element of a buffer holding each value twice
        return np.repeat(x, 2, axis=d)[step + (slice(None, None, 2),)]
    raise ValueError(f"layout={layout!r} is unknown; allowed: {', '.join(LAYOUTS)}")
