"""The contract rules a target declares for special values — how equal zeros are ordered, what
a NaN does, whether subnormals flush — and the exact max and min scans under each rule."""

from __future__ import annotations

import numpy as np

from .dtypes import FLOAT_DTYPES, is_float, read_as_zero

#: How a max or min scan may order equal zeros, as a target's spec declares it.
ZERO_ORDERS: dict[str, str] = {
    "either": "-0 and +0 are equal: either may come back where the prefix holds it (IEEE "
              "754-2008 maxNum and minNum return an operand, so a zero no input has is wrong)",
    "ordered": "-0 < +0 (IEEE 754-2019 maximum and minimum)",
}
#: How a float scan treats a NaN input, as a target's spec declares it.  "propagate" is
#: IEEE arithmetic for every operator; "ignore" and "skip" are declared for add, mul, max
#: and min (what an all-NaN prefix gives under "ignore" is :data:`NAN_PREFIXES`').
NAN_RULES: dict[str, str] = {
    "propagate": "a NaN anywhere in the prefix gives NaN (IEEE arithmetic; IEEE 754-2019 "
                 "maximum and minimum)",
    "ignore": "NaN inputs are left out of the running result, which a NaN input's output "
              "repeats (C fmax and fmin, IEEE 754-2019 maximumNumber, numpy.nancumsum)",
    "skip": "NaN at each NaN input, every other output the scan of the inputs that are not "
            "NaN (pandas' skipna=True: [1, nan, 2, 3] -> [1, nan, 3, 6])",
}
#: Under nans="ignore": what an output whose whole prefix is NaN holds.
NAN_PREFIXES: dict[str, str] = {
    "nan": "NaN (numpy.fmax.accumulate, C fmax)",
    "identity": "the operator's identity: 0 for add, 1 for mul, -inf for max, +inf for min "
                "(numpy.nancumsum, pyarrow)",
}

#: What a float scan does with subnormal numbers, as a target's spec declares it; also
#: "flush:DTYPE,...", "flush" in the float dtypes named alone (:func:`flushed_dtypes`).
SUBNORMAL_RULES: dict[str, str] = {
    "keep": "IEEE gradual underflow: subnormal inputs and results are numbers like any other",
    "flush": "subnormal inputs and results read as zero of their sign (DAZ and FTZ, as XLA does "
             "on CPUs) in every float dtype; what that allows depends on the operator "
             "(FLUSH_RULES).  'flush:float32' names the dtypes that flush: -ftz=true on NVIDIA "
             "GPUs flushes float32, never float64 (docs/explanation/special-values.md)",
}
#: What subnormals='flush' allows, per operator (the ``flush`` column of :data:`OPERATORS`).
#: Decided from what flush-to-zero hardware computes (docs/explanation/special-values.md, an
#: H100 under -ftz=true and --use_fast_math, float32; float64 never flushes there): add, mul, fma and
#: exp-log arithmetic read subnormal operands as zeros of their sign and flush subnormal
#: results to them, sign kept; fmaxf and fminf (max.ftz, min.ftz) do the same and order -0
#: below +0; a compare-and-select (setp.ftz, then selp) compares subnormals as zeros but
#: returns the selected operand's bits unflushed; moves never flush.  The CPU libraries agree:
#: jax's cummax returns flushed zeros, torch's cummax under set_flush_denormal(True) the
#: flushed value at the last tied index.
FLUSH_RULES: dict[str, str] = {
    # Rounding operators: a flushed output is a rounding of its own, so 'flush' permits it.
    "within bound": "may flush: every output is held to the operator's criterion grown by what "
                    "reading subnormal inputs and partial results as zero can move it; a scan "
                    "that keeps every subnormal conforms too",
    # Selecting operators round nothing: flushing is visible in the bits, so it is required.
    "exact": "must flush: every comparison reads a subnormal as a zero of its sign, and each "
             "output is the exact scan of those zeros (fmaxf under -ftz=true), or the first or "
             "the last input tied with it, unflushed (a compare-and-select: the earlier or the "
             "later operand winning ties); an index names the last tied input, its value that "
             "input or its zero.  A scan that keeps subnormals, or flushes only some, fails",
}


def check_rules(zeros: str = "either", nans: str = "propagate", subnormals: str = "keep") -> None:
    """Raise a ValueError naming the argument unless each is a known rule."""
    for name, value, allowed in (("zeros", zeros, ZERO_ORDERS), ("nans", nans, NAN_RULES)):
        if value not in allowed:
            raise ValueError(f"{name}={value!r} is unknown; allowed: {', '.join(allowed)}")
    flushed_dtypes(subnormals)


def flushed_dtypes(subnormals: str) -> tuple[str, ...]:
    """The float dtypes whose subnormals a target with the subnormal rule ``subnormals``
    (:data:`SUBNORMAL_RULES`) reads as zero, or a ValueError naming what is allowed."""
    if subnormals in SUBNORMAL_RULES:
        return () if subnormals == "keep" else FLOAT_DTYPES
    head, _, named = str(subnormals).partition(":")
    dtypes = tuple(named.split(",")) if named else ()
    if head != "flush" or not dtypes or not set(dtypes) <= set(FLOAT_DTYPES):
        raise ValueError(f"subnormals={subnormals!r} is unknown; allowed: "
                         f"{', '.join(SUBNORMAL_RULES)}, or flush:DTYPE,... of "
                         f"{', '.join(FLOAT_DTYPES)}")
    return dtypes


def extreme_scan(x: np.ndarray, which: str, zeros: str = "either", nans: str = "propagate"
                 ) -> np.ndarray:
    """The inclusive max or min scan along the last axis of ``x`` under a zero order of
    :data:`ZERO_ORDERS` and a NaN rule of :data:`NAN_RULES`, exact.  Under "either" the
    earlier operand wins ties, as the CUDA functors do, so a zero answer has the sign of the
    row's first zero."""
    if which not in ("max", "min"):
        raise ValueError(f"which={which!r}; allowed: 'max', 'min'")
    check_rules(zeros, nans)
    with np.errstate(invalid="ignore"):
        if nans in ("ignore", "skip"):
            out = (np.fmax if which == "max" else np.fmin).accumulate(x, axis=-1)
            if nans == "skip":
                out = np.where(np.isnan(x), x, out)
        else:
            out = (np.maximum if which == "max" else np.minimum).accumulate(x, axis=-1)
    if not is_float(x.dtype) or not x.size:
        return out
    zero = x == 0
    if not zero.any():
        return out
    if zeros == "either":
        first = np.take_along_axis(x, np.argmax(zero, axis=-1)[..., None], axis=-1)
        return np.where(out == 0, first, out)
    # Ordered: max is +0 once any +0 is in the prefix, min is -0 once any -0 is.
    seen = np.logical_or.accumulate(zero & (np.signbit(x) == (which == "min")), axis=-1)
    wanted = x.dtype.type(-0.0 if which == "min" else 0.0)
    return np.where(out == 0, np.where(seen, wanted, -wanted), out)


def zero_held(x: np.ndarray, got: np.ndarray, inclusive: bool = True) -> np.ndarray:
    """Per output of a max or min scan of ``x`` along its last axis: whether ``got`` is a zero
    of a sign that a zero of its prefix has (ending before the output where not
    ``inclusive``).  Under zeros='either' -0 and +0 are equal, but a max or min returns one
    of its operands: a zero no input has is none of them."""
    zero = x == 0
    held = [np.logical_or.accumulate(zero & (np.signbit(x) == sign), axis=-1)
            for sign in (False, True)]
    if not inclusive:  # the empty prefix of output 0 holds no zero
        held = [np.concatenate([np.zeros_like(h[..., :1]), h[..., :-1]], axis=-1) for h in held]
    with np.errstate(invalid="ignore"):
        return (got == 0) & np.where(np.signbit(got), held[1], held[0])


def flushed_extreme_scan(x: np.ndarray, which: str, zeros: str = "either",
                         nans: str = "propagate") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a max or min scan along the last axis of ``x`` may return under
    subnormals='flush' (:data:`FLUSH_RULES`, "exact"): the scan of :func:`read_as_zero` of
    ``x``, and per output the positions of the first and the last input tied with it (equal
    once read as zero; under the "ordered" zero order, with its sign too), whose own bits a
    compare-and-select returns."""
    key = read_as_zero(x)
    answer = extreme_scan(key, which, zeros, nans)
    with np.errstate(invalid="ignore"):
        tied = key == answer
        if zeros == "ordered":
            tied &= np.signbit(key) == np.signbit(answer)
        same = answer[..., 1:] == answer[..., :-1]
        if zeros == "ordered":
            same &= np.signbit(answer[..., 1:]) == np.signbit(answer[..., :-1])
    at = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
    # The running answer takes a new value only from an input equal to it: its first tie.
    changed = np.concatenate([np.ones(x.shape[:-1] + (min(1, x.shape[-1]),), dtype=bool), ~same],
                             axis=-1)
    first = np.maximum.accumulate(np.where(changed, at, 0), axis=-1)
    # Inputs tied with the answer when they came are tied with it still, until it changes.
    last = np.maximum.accumulate(np.where(tied, at, 0), axis=-1)
    return answer, first, np.maximum(first, last)


def arg_extreme_scan(x: np.ndarray, which: str) -> tuple[np.ndarray, np.ndarray]:
    """The inclusive cummax or cummin of ``x`` along its last axis with indices, exactly as the
    argmax and argmin monoids define them: NaN wins, and equal values go to the later index
    (so each value is ``x`` at its index, the zero's sign included)."""
    if which not in ("max", "min"):
        raise ValueError(f"which={which!r}; allowed: 'max', 'min'")
    if x.shape[-1] == 0:
        return x.copy(), np.zeros(x.shape, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        if is_float(x.dtype):
            ordered = (np.fmax if which == "max" else np.fmin).accumulate(x, axis=-1)
            seen_nan = np.logical_or.accumulate(np.isnan(x), axis=-1)
        else:
            ordered = (np.maximum if which == "max" else np.minimum).accumulate(x, axis=-1)
            seen_nan = np.zeros(x.shape, dtype=bool)
        before = np.concatenate([ordered[..., :1], ordered[..., :-1]], axis=-1)
        nan_before = np.concatenate([np.zeros_like(seen_nan[..., :1]), seen_nan[..., :-1]],
                                    axis=-1)
        beats = (x >= before) if which == "max" else (x <= before)
        # Position i takes over when it is a NaN, or matches the running extreme and no NaN
        # came before it; an output's index is the last takeover so far.
        update = (np.isnan(x) if is_float(x.dtype) else False) | (~nan_before & beats)
    update[..., 0] = True
    idx = np.maximum.accumulate(np.where(update, np.arange(x.shape[-1]), 0), axis=-1)
    return np.take_along_axis(x, idx, axis=-1), idx.astype(np.int64)
