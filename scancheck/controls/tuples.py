"""Broken scans over tuples of arrays (``TargetSpec(combine=True)`` or a user's monoid): what
only the non-commutative probe monoids show; under add, max and min each is right.  And a
user's operator that is no monoid, whose fault is the operator's."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..targets.spec import TargetSpec


def blelloch_down_sweep_swapped(elems: tuple, combine: Any) -> tuple:
    """The exclusive Blelloch scan with each down-sweep combine's operands swapped: the
    left subtree's total before the parent's prefix."""
    from ..kernels.generic_scans import blelloch

    return blelloch(elems, combine, swap_down=True)


def reverse_in_the_flip_convention(elems: tuple, combine: Any) -> tuple:
    """Declares reverse='suffix' (x[k] + ... + x[n-1]) and computes flip(scan(flip(x)))."""
    from ..kernels.generic_scans import sequential

    return tuple(v[::-1] for v in sequential(tuple(v[::-1] for v in elems), combine))


def combines_later_first(elems: tuple, combine: Any) -> tuple:
    """A sequential inclusive scan that folds each element in as combine(x[k], acc)."""
    from ..kernels.generic_scans import sequential

    return sequential(elems, lambda a, b: combine(b, a))


def identity_on_the_first_leaf_only(elems: tuple, combine: Any) -> tuple:
    """An exclusive scan whose first output holds the identity's first leaf and zeros on the
    others, as if every other leaf's identity were zero."""
    from ..kernels.generic_scans import sequential

    incl = sequential(elems, combine)
    out = []
    for i, (v, e) in enumerate(zip(incl, combine.identity)):
        head = np.full(v[:1].shape, e if i == 0 else 0, dtype=v.dtype)
        out.append(np.concatenate([head, v[:-1]]))
    return tuple(out)


def hillis_steele_skipping_its_last_step(elems: tuple, combine: Any) -> tuple:
    """An inclusive Hillis-Steele scan over tuples that stops one step short (its loop bound
    off by one): the outputs past the last step's distance miss the elements that far back,
    and at two elements output 1 is element 1 alone."""
    n = elems[0].shape[0]
    distances = [1 << j for j in range(max(n - 1, 0).bit_length())]
    out = tuple(np.array(v, copy=True) for v in elems)
    for d in distances[:-1]:
        later = combine(tuple(v[:-d] for v in out), tuple(v[d:] for v in out))
        out = tuple(np.concatenate([v[:d], np.asarray(w, dtype=v.dtype)])
                    for v, w in zip(out, later))
    return out


def exclusive_declared_inclusive(elems: tuple, combine: Any) -> tuple:
    """A right exclusive scan over tuples (the identity, then each prefix before its own
    element), declared inclusive."""
    from ..kernels.generic_scans import sequential

    incl = sequential(elems, combine)
    return tuple(np.concatenate([np.full(v[:1].shape, e, dtype=v.dtype), v[:-1]])
                 for v, e in zip(incl, combine.identity))


def _carried_in(elems: tuple, combine: Any, store: Any) -> tuple:
    """A sequential inclusive scan whose running value passes through ``store`` (a leaf to
    the workspace's type) after each combine, cast back to the leaf's own dtype."""
    from ..kernels.generic_scans import sequential

    def stored(a: tuple, b: tuple) -> tuple:
        return tuple(store(v).astype(v.dtype) for v in map(np.asarray, combine(a, b)))

    return sequential(elems, stored)


def carried_in_int64(elems: tuple, combine: Any) -> tuple:
    """A sequential inclusive scan whose running value is stored in an int64 workspace, each
    leaf cast back to its own dtype for the next combine: integer leaves come back as they
    were (every narrower type's values, and uint64's bits, survive int64), float leaves lose
    their fractions."""
    return _carried_in(elems, combine, lambda v: v.astype(np.int64))


def carried_in_float32(elems: tuple, combine: Any) -> tuple:
    """A sequential inclusive scan whose running value is stored in a float32 workspace,
    each leaf cast back to its own dtype for the next combine: integer leaves pass through
    untouched, float32 ones too, float64 ones lose their low bits."""
    return _carried_in(elems, combine,
                       lambda v: v.astype(np.float32) if v.dtype.kind == "f" else v)


def unsigned_leaves_as_signed(elems: tuple, combine: Any) -> tuple:
    """A sequential scan that carries each unsigned leaf as the signed type of its width (as
    a library without unsigned kernels might): + and * wrap alike in either, but a compare
    orders the values past the signed maximum below zero."""
    from ..kernels.generic_scans import sequential

    signed = tuple(v.view(f"int{8 * v.itemsize}") if v.dtype.kind == "u" else v for v in elems)
    out = sequential(signed, combine)
    return tuple(np.asarray(o).view(v.dtype) for o, v in zip(out, elems))


def leaves_read_as_c_contiguous(elems: tuple, combine: Any, axis: int) -> tuple:
    """A generic N-D scan along ``axis`` that reads each leaf as if it were C-contiguous from
    its data pointer (a kernel indexing ``row * n + i``): right on C-order leaves only."""
    from ..kernels.generic_scans import sequential
    from .rows import read_as_c_contiguous

    return sequential(tuple(read_as_c_contiguous(v) for v in elems), combine, axis)


def reverse_refusing_a_negative_axis(elems: tuple, combine: Any, axis: int) -> tuple:
    """A generic N-D reverse scan, flip(scan(flip(x))), that flips its leaves along ``axis``
    before normalising the axis, as jax.lax.associative_scan(reverse=True) does: a negative
    axis raises."""
    from ..kernels.generic_scans import sequential

    if axis < 0:
        raise TypeError(f"flip dimensions must be nonnegative, got ({axis},)")
    flipped = tuple(np.flip(v, axis) for v in elems)
    return tuple(np.flip(v, axis) for v in sequential(flipped, combine, axis))


def rows_stacked(elems: tuple, combine: Any, axis: int) -> tuple:
    """A generic N-D scan along ``axis`` that scans each row of the batch on its own and
    stacks the rows back (``np.stack`` of the rows' scans): right wherever there is a row,
    a ValueError on an empty batch."""
    from ..kernels.generic_scans import sequential

    moved = tuple(np.moveaxis(v, axis, -1) for v in elems)
    count = int(np.prod(moved[0].shape[:-1]))
    rows = [sequential(tuple(v.reshape(count, v.shape[-1])[r] for v in moved), combine)
            for r in range(count)]
    return tuple(np.moveaxis(np.stack([row[i] for row in rows]).reshape(m.shape), -1, axis)
                 for i, m in enumerate(moved))


def _online_softmax_forgetting_a_rescale(a: tuple, b: tuple) -> tuple:
    # (running max m, sum s of exp(x - m)): the earlier sum is never rescaled to the new max.
    from ..core.monoids import namespace

    xp = namespace(a[0])
    m = xp.maximum(a[0], b[0])
    return (m, a[1] + b[1] * xp.exp(b[0] - m))


def _softmax_elements(rng: np.random.Generator, shape: tuple) -> tuple:
    return (rng.normal(0, 2, shape).astype(np.float32),
            rng.uniform(0.5, 2, shape).astype(np.float32))


def _monoids() -> Any:
    from ..core.monoids import Monoid

    return Monoid(_online_softmax_forgetting_a_rescale, (np.float32(-np.inf), np.float32(0)),
                  name="online softmax, one rescale forgotten", elements=_softmax_elements)


#: A user's operator that is no monoid (its associativity fails): the operator's fault.
ONLINE_SOFTMAX_FORGETTING_A_RESCALE = _monoids()


def _first_of_equal_maxima(a: tuple, b: tuple) -> tuple:
    # (max, index): of equal maxima the one of the smaller index, wherever it stands.
    from ..core.monoids import namespace

    xp = namespace(a[0])
    later = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
    return (xp.where(later, b[0], a[0]), xp.where(later, b[1], a[1]))


def _argmax_elements(rng: np.random.Generator, shape: tuple) -> tuple:
    # Few values, so that equal maxima are common.
    return (rng.integers(0, 4, shape).astype(np.int32),
            rng.integers(0, 1000, shape).astype(np.int64))


def _argmax_first() -> Any:
    from ..core.monoids import Monoid

    return Monoid(_first_of_equal_maxima, (np.int32(np.iinfo(np.int32).min),
                                           np.int64(np.iinfo(np.int64).max)),
                  name="max and its first index", elements=_argmax_elements)


#: A user's (max, argmax) monoid: of equal maxima, the smaller index.
ARGMAX_FIRST = _argmax_first()


def running_argmax_taking_the_later_of_equal_maxima(elems: tuple) -> tuple:
    """A sequential scan of :data:`ARGMAX_FIRST` that compares with ``>=``: of equal maxima
    it keeps the later element, where the monoid keeps the smaller index."""
    m, i = (np.array(v, copy=True) for v in elems)
    for k in range(1, m.shape[0]):
        if not m[k] >= m[k - 1]:
            m[k], i[k] = m[k - 1], i[k - 1]
    return m, i


def fold_of_the_declared_monoid(elems: tuple) -> tuple:
    """A correct sequential scan of the spec's own monoid (the fault is the operator's)."""
    from ..core.monoids import BoundCombine
    from ..kernels.generic_scans import sequential

    return sequential(elems, BoundCombine(ONLINE_SOFTMAX_FORGETTING_A_RESCALE))


for fn, spec in (
    (blelloch_down_sweep_swapped, TargetSpec(combine=True, inclusive=False)),
    (reverse_in_the_flip_convention, TargetSpec(combine=True, reverse="suffix")),
    (combines_later_first, TargetSpec(combine=True)),
    (carried_in_int64, TargetSpec(combine=True)),
    (carried_in_float32, TargetSpec(combine=True)),
    (unsigned_leaves_as_signed, TargetSpec(combine=True)),
    (leaves_read_as_c_contiguous, TargetSpec(combine=True, axis="arg")),
    (reverse_refusing_a_negative_axis, TargetSpec(combine=True, axis="arg", reverse="flip")),
    (rows_stacked, TargetSpec(combine=True, axis="arg")),
    (identity_on_the_first_leaf_only, TargetSpec(combine=True, inclusive=False)),
    (exclusive_declared_inclusive, TargetSpec(combine=True)),
    (hillis_steele_skipping_its_last_step, TargetSpec(combine=True)),
    (fold_of_the_declared_monoid,
     TargetSpec(op="scancheck.controls.tuples:ONLINE_SOFTMAX_FORGETTING_A_RESCALE")),
    (running_argmax_taking_the_later_of_equal_maxima,
     TargetSpec(op="scancheck.controls.tuples:ARGMAX_FIRST")),
):
    fn.scan_spec = spec  # type: ignore[attr-defined]
