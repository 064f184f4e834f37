"""What a float max or min scan may return: the exact scan under the spec's zero order, NaN
rule and subnormal rule, and where it leaves a choice, the choices."""

from __future__ import annotations

import numpy as np

from ...core.arrays import dtype_name, same_bits
from ...core.dtypes import read_as_zero
from ...core.operators import get_operator, shifted
from ...core.rules import extreme_scan, flushed_extreme_scan, zero_held
from ...targets.spec import TargetSpec


def extreme_answers(spec: TargetSpec, x: np.ndarray, flush: bool
                    ) -> tuple[np.ndarray, list[np.ndarray]]:
    """The max or min scan of ``x`` along its last axis under the spec's rules, and with
    ``flush`` (FLUSH_RULES, "exact") that of the inputs read as zero and, per output, the
    first and the last input tied with it."""
    if flush:
        want, first, last = flushed_extreme_scan(x, spec.op, spec.zeros, spec.nans)
        picks = [np.take_along_axis(x, i, axis=-1) for i in (first, last)]
    else:
        want, picks = extreme_scan(x, spec.op, spec.zeros, spec.nans), []
    if not spec.inclusive:
        ident = get_operator(spec.op).identity(dtype_name(x.dtype))
        want, picks = shifted(want, ident), [shifted(p, ident) for p in picks]
    return want, picks


def extreme_agree(spec: TargetSpec, x: np.ndarray, got: np.ndarray, flush: bool
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per output of a float max or min scan of ``x`` along its last axis: whether ``got`` is
    what the spec allows, and the answer it is judged against.  That is the exact scan bit
    for bit, or where the spec leaves the order of zeros open, at a zero answer a zero of a
    sign its prefix holds (:func:`~scancheck.core.rules.zero_held`); with ``flush``, the scan
    of the inputs read as zero, or at a zero answer the bits of the first or the last input
    tied with it (what a compare-and-select returns)."""
    want, picks = extreme_answers(spec, x, flush)

    def same(a: np.ndarray) -> np.ndarray:
        return same_bits(got.ravel(), a.ravel()).reshape(got.shape)

    ok = same(want)
    if spec.zeros == "either":
        ok |= (want == 0) & zero_held(read_as_zero(x) if flush else x, got, spec.inclusive)
    for pick in picks:
        ok |= (want == 0) & same(pick)
    return ok, want


def extreme_some(spec: TargetSpec, x: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Per output of a float max or min scan of ``x`` along its last axis: whether ``got`` is
    the running extreme of ``x`` with some of its subnormals read as zero (each output the
    one before it, an input not beyond it staying behind, or that input or its zero, not
    behind it), where no NaN has come; a restart or a skipped input is none."""
    ident = get_operator(spec.op).identity(dtype_name(x.dtype))
    xs = x if spec.inclusive else shifted(x, ident)
    zs = read_as_zero(xs)
    prev = shifted(got, ident)
    ahead = np.greater_equal if spec.op == "max" else np.less_equal
    low = np.minimum(xs, zs) if spec.op == "max" else np.maximum(xs, zs)

    def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return same_bits(a.ravel(), b.ravel()).reshape(a.shape)

    with np.errstate(invalid="ignore"):
        taken = (same(got, xs) | same(got, zs)) & ahead(got, prev)
        kept = (same(got, prev) | ((got == 0) & (prev == 0))) & ahead(prev, low)
    return (taken | kept) & ~np.logical_or.accumulate(np.isnan(xs), axis=-1)
