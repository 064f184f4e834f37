"""Subnormals read as zero, declared or not: which rule explains a failure, and the
subnormal that shows it (each operator's rule is its ``flush`` column,
:data:`~scancheck.core.rules.FLUSH_RULES`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.arrays import dtype_name, same_bits
from ...core.dtypes import finfo, read_as_zero, subnormal
from ...core.operators import get_operator, shifted
from ...core.rules import arg_extreme_scan, flushed_dtypes
from ...oracle.bounds import (
    Verdict,
    certified,
    classify,
    sequential_depths,
)
from ...targets.spec import TargetSpec
from ...targets.target import Target
from ..diagnosis import Cause, Reason
from .base import Failure, short


def flush_attributed(target: Target, x: np.ndarray, failure: Failure, ok_flush: np.ndarray,
                      ok_keep: np.ndarray, fresh: bool, underflow: bool = False,
                      some: np.ndarray | None = None) -> Failure:
    """``failure`` (of a float scan of ``x``) as a matter of subnormals where the outputs'
    verdicts under the two subnormal rules, ``ok_flush`` and ``ok_keep``, show it: every
    output right under the rule not declared, or (where the operator's flushing is exact,
    :data:`~scancheck.core.rules.FLUSH_RULES`) each output right under one rule or the other,
    or right once read as zero itself (``some``: some subnormals flushed, others kept); and a
    subnormal shows at the failing output (an input of its prefix, the output or its exact
    value), or ``underflow``: the judge relaxed only where a partial result does.  A scan
    that returned a subnormal of its own making (``fresh``) flushes nothing: none is read as
    zero there."""
    declared = flushes(target, x.dtype)
    exact = get_operator(target.spec.op).flush == "exact"
    if declared and not exact:  # flushing is allowed, not required: keeping is no failure
        return failure
    witness = subnormal_witness(x, failure, target.spec.inclusive)
    if witness is None and not underflow:
        return failure
    if fresh and not declared:  # what reads subnormals as zero makes none of its own
        return failure
    other = ok_keep if declared else ok_flush
    dt, rule = dtype_name(x.dtype), target.spec.subnormals
    # The declared dtypes but this one: what a scan that flushes those others declares.
    rest = ",".join(d for d in flushed_dtypes(rule) if d != dt)
    if other.all():
        text = (f"subnormals kept (IEEE gradual underflow) where the spec declares every "
                f"{dt} subnormal read as zero (subnormals={rule!r}); a scan that keeps them "
                f"declares subnormals='keep'" + (f", or where it flushes the other types, "
                                                 f"names them ('flush:{rest}')" if rest else "")
                if declared else
                f"subnormals read as zero (DAZ or FTZ): every output is right once subnormal "
                f"inputs and results read as zeros of their sign; a target that flushes by "
                f"design declares subnormals='flush' (--subnormals flush), or 'flush:{dt}' "
                f"where {dt} alone flushes")
    elif exact and (ok_flush | ok_keep | (False if some is None else some)).all():
        text = ("some subnormals read as zero and others kept (DAZ or FTZ on some values "
                "only): every output is right once it and some of the subnormal inputs read as "
                "zero, so neither subnormals='keep' nor subnormals='flush' describes it")
    else:
        return failure
    failure.cause, failure.reason = Cause.PRECISION, Reason.SUBNORMALS
    failure.diagnosis = (f"{failure.diagnosis}: {text}; " + (
        witness or f"a partial result falls below the smallest normal number "
                   f"{float(finfo(x.dtype).smallest_normal)!r}"))
    failure.detail["subnormals"] = ("kept" if declared and other.all() else
                                    "read as zero" if other.all() else "some read as zero")
    return failure


def new_subnormals(x: np.ndarray, got: np.ndarray) -> bool:
    """Whether ``got`` holds a subnormal whose bits no element of ``x`` has: a result that
    flushing arithmetic never returns (a move or a selection returns an input unflushed)."""
    out = np.asarray(got).reshape(-1)
    made = out[subnormal(out)]
    if not made.size:
        return False
    view = {2: np.uint16, 4: np.uint32, 8: np.uint64}[out.dtype.itemsize]
    return not np.isin(made.view(view), np.ascontiguousarray(x).reshape(-1).view(view)).all()


def subnormal_witness(x: np.ndarray, failure: Failure, inclusive: bool) -> str | None:
    """The subnormal that shows a flush at the failure's output: a subnormal input of its
    prefix (the one the output or its exact value is, if either is), and the output or its
    exact value where those are subnormal (None where none is)."""
    k = failure.index
    told = []
    if k is not None:
        prefix = x[:k + 1] if inclusive else x[:k]
        tiny = subnormal(prefix)
        hits = np.argwhere(tiny)
        if hits.size:
            values = {np.asarray(v).tobytes() for v in (failure.got, failure.expected)}
            named = [h for h in hits if prefix[tuple(h)].tobytes() in values] or list(hits)
            at = tuple(int(i) for i in named[-1])
            where = f"x[{at[0]}]" + "".join(f"[{i}]" for i in at[1:])
            told.append(f"{where} = {float(prefix[at])!r} is subnormal")
        for what, v in (("output", failure.got), ("exact output", failure.expected)):
            v = np.asarray(v)
            if v.dtype.kind == "f" and subnormal(v.reshape(-1)).any():
                told.append(f"the {what} {short(v)!r} " + ("holds a subnormal" if v.ndim else
                                                            "is subnormal"))
    return ", ".join(told) or None


def scaled_out(x: np.ndarray, least: bool) -> tuple[np.ndarray, int] | None:
    """``x`` times 2**s, and s, for a power of two that leaves no subnormal in it: the least
    one (``least``), or one that takes its largest magnitude to about 1, so far as every sum
    of its elements stays finite; None where no power of two does both.  A scan right
    but for reading subnormals as zero is right on either (a power of two changes no
    rounding), one whose intermediates have less range than the type on the second alone."""
    finite = x[np.isfinite(x) & (x != 0)].astype(np.float64)
    if not finite.size:
        return None
    info = finfo(x.dtype)
    low = int(np.floor(np.log2(np.abs(finite).min())))
    high = int(np.floor(np.log2(np.abs(finite).max())))
    # Room for n of the largest: every partial sum stays below the largest float.
    room = int(info.maxexp) - 1 - int(x.shape[-1]).bit_length() - high
    s = max(0, int(info.minexp) - low)
    if not least:
        s = max(s, min(-high, room))
    if s > room:
        return None
    return np.ldexp(x.astype(np.float64), s).astype(x.dtype), s


def flushes(target: Target, dtype: Any) -> bool:
    """Whether the target's spec reads subnormals of ``dtype`` as zero."""
    return dtype_name(dtype) in flushed_dtypes(target.spec.subnormals)


def flush_explains(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray) -> bool:
    """Whether reading subnormals as zero accounts for every error of ``got``: right where
    the certificate holds for a flushing scan, and within the bound grown by what flushing
    can move."""
    inc = target.spec.inclusive
    v = x[np.isfinite(x) & (x != 0)]  # zero is no subnormal
    if not (np.abs(v) < finfo(x.dtype).smallest_normal).any():
        return False
    where = certified(x, inc, flush=True)
    rep = classify(x, got, sequential_depths(x.shape[0], inc), inclusive=inc, exact=want,
                   flush=True)
    return bool(((got == want) | ~where).all()) and rep.verdict != Verdict.BEYOND_BOUND


def indices_some(spec: TargetSpec, x: np.ndarray, values: np.ndarray, idx: np.ndarray
                  ) -> np.ndarray:
    """Per output of a cummax or cummin: whether it names the index before it or its own,
    an input tied with the running extreme of the inputs read as zero, and returns that
    input or its zero (what a scan that flushes some subnormals and keeps others returns)."""
    m = x.shape[-1]
    inside = (idx == np.arange(m)) | (idx == shifted(idx, -1))
    at = np.clip(idx, 0, max(m - 1, 0))
    picked = np.take_along_axis(x, at, axis=-1) if x.size else x
    want_v = arg_extreme_scan(read_as_zero(x), spec.op)[0]
    zeroed = read_as_zero(picked)

    def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return same_bits(a.ravel(), b.ravel()).reshape(a.shape)

    with np.errstate(invalid="ignore"):
        tied = same(zeroed, want_v) | ((zeroed == 0) & (want_v == 0))
    return inside & tied & (same(values, picked) | same(values, zeroed))


def indices_agree(spec: TargetSpec, x: np.ndarray, values: np.ndarray, idx: np.ndarray,
                   flush: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per output of a cummax or cummin of ``x`` along its last axis: whether the index and
    whether the value are right, and the values and indices due.  With ``flush`` the indices
    are those of the inputs read as zero (a subnormal ties with the zeros), and a value may
    be the input at its index or that input read as zero (FLUSH_RULES, "exact")."""
    want_v, want_i = arg_extreme_scan(read_as_zero(x) if flush else x, spec.op)
    ok_i = idx == want_i

    def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return same_bits(a.ravel(), b.ravel()).reshape(a.shape)

    ok_v = same(values, want_v)
    if flush:
        at = np.clip(want_i, 0, max(x.shape[-1] - 1, 0))
        ok_v |= same(values, np.take_along_axis(x, at, axis=-1) if x.size else x)
    return ok_i, ok_v, want_v, want_i
