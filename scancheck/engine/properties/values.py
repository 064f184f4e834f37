"""The value properties: ``integers exact``, ``certified exact``, ``floats within bound``
and ``nan and inf``, and what a float failure means (logic or precision, from ``steps``
data of the same size)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from ...core.arrays import as_dtype
from ...core.dtypes import SIGNIFICAND_BITS, finfo, is_float
from ...core.operators import get_operator, shifted
from ...core.rules import NAN_RULES
from ...oracle.bounds import (
    Verdict,
    abs_sums,
    certified,
    classify,
    log_depths,
    narrower_type,
    overflow_threshold,
    sequential_depths,
)
from ...targets.spec import TargetSpec
from ...targets.target import Target
from ..cases import Case
from ..diagnosis import Cause, Reason
from ..strategies import generate_data
from .accumulation import accumulated_failure, accumulator
from .base import Check, Contract, Failure, prefix_error, untold
from .nan_rules import (
    FINITE_TWIN,
    SPECIAL_PLACES,
    TWIN_VALUE,
    kept_rule_failure,
    longer_input,
    made_from_specials,
    remade,
)
from .running import agree, bits_differ, exact_answer, first_bad, on_outputs, promoted, run
from .subnormals import flush_explains, flushes, scaled_out, subnormal_witness


def certificate_failure(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray
                         ) -> Failure | None:
    """``certified exact``: where every summation order is exact, the output must be the
    exact sum (a narrow carry shows even inside the any-order bound)."""
    # The values, not the bits: adding the identity +0.0 to a -0.0 sum is a correct +0.0.
    same = got == want
    if same.all():  # nothing for the certificate to judge (most cases: it costs 4 passes)
        return None
    where = certified(x, target.spec.inclusive, flush=flushes(target, x.dtype))
    return first_bad(target, ~where | same, got, want,
                      "differs from the exact sum where every summation order is exact "
                      "(the exactness certificate)", reason=Reason.CERTIFICATE)


def bound_failure(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray
                   ) -> Failure | None:
    """``floats within bound``: every error within the rounding bound of any summation
    order, infinities only where some order may overflow."""
    inc = target.spec.inclusive
    # An output equal to the exact answer is within every bound: where all are, no bound is
    # computed (the dyadic, integer and zero data of a right scan).
    rep = None if (got == want).all() else classify(
        x, got, sequential_depths(x.shape[0], inc), inclusive=inc, exact=want,
        flush=flushes(target, x.dtype))
    if rep is None or rep.verdict != Verdict.BEYOND_BOUND:
        return accumulated_failure(target, x, got, want)
    k = int(rep.beyond[0])
    if not (np.isfinite(got[k]) and np.isfinite(want[k])):
        return Failure(Cause.LOGIC, f"{got[k]} where the exact prefix is {want[k]}", k,
                       got[k], want[k], reason=Reason.BEYOND_BOUND)
    # The bound alone is what the check allows where no wider accumulator is declared (a
    # declared one holds the output to a tighter bound of its own).
    allowed = None if accumulator(target, x.dtype.name) else float(rep.bound[k])
    return Failure(Cause.LOGIC, f"beyond the rounding bound of any summation order "
                   f"({rep.bound_fraction[k]:.3g}x the bound)", k, got[k], want[k],
                   allowed=allowed, reason=Reason.BEYOND_BOUND)


def bound_fractions(x: np.ndarray, got: np.ndarray, want: np.ndarray, inclusive: bool,
                     k: int | None = None) -> dict[str, float]:
    """The error at output k (the worst output if None) as fractions of the bounds of the
    sequential order and of a log2-depth tree, the deepest and the shallowest scans."""
    n = x.shape[0]
    tree = log_depths(n) if inclusive else np.r_[0, log_depths(max(n - 1, 0))][:n]
    out = {}
    for label, depths in (("err/seq bound", sequential_depths(n, inclusive)),
                          ("err/log2 bound", tree)):
        frac = classify(x, got, depths, inclusive=inclusive, exact=want).bound_fraction
        out[label] = float(frac.max() if k is None else frac[k])
    return out


def _steps_probe(target: Target, case: Case) -> Failure | None:
    """The target on ``steps`` data of the case's size (three seeds): any difference from
    the exact answer there is a logic error, since no partial sum of adjacent elements
    needs more than 3 bits."""
    for seed in (case.seed, case.seed + 1, case.seed + 2):
        x = Case(case.n, case.dtype, "steps", seed).data("add")
        got, bad = run(target, x)
        if bad is not None:
            return bad
        want = exact_answer(target, promoted(target, x))
        found = first_bad(target, got == want, got, want, "")
        if found is not None:
            return found
    return None


def _float_failure(target: Target, case: Case, x: np.ndarray, got: np.ndarray,
                   want: np.ndarray, failure: Failure,
                   draw: Callable[[int], np.ndarray] | None = None) -> Failure:
    """Attribute a float add failure at ``failure.index``: a logic error if ``steps`` data of
    the same size show it too, else precision lost, with the bits the target behaves like
    (on the case's data of other seeds, or ``draw(seed)``'s).  The error the bound allows
    there is kept: the attribution judges the same output of the same input."""
    told = _float_told(target, case, x, got, want, failure, draw)
    return replace(told, allowed=failure.allowed) if told.index == failure.index else told


def _float_told(target: Target, case: Case, x: np.ndarray, got: np.ndarray,
                want: np.ndarray, failure: Failure,
                draw: Callable[[int], np.ndarray] | None) -> Failure:
    k = failure.index
    assert k is not None
    detail = bound_fractions(x, got, want, target.spec.inclusive, k)
    if not flushes(target, x.dtype) and flush_explains(target, x, got, want):
        told = _subnormals_told(target, case, x, got, want, failure, detail)
        if told is not None:
            return told
    kahan = _compensated_inf(target, x, got, want, k)
    if kahan is not None:
        kahan.detail.update(detail)
        return kahan
    probe = _steps_probe(target, case)
    if probe is not None:
        where = f"index {probe.index}" if probe.index is not None else "the call itself"
        unwritten = probe.reason == Reason.NEVER_WRITTEN
        text = probe.diagnosis if unwritten else (
            f"{failure.diagnosis}; wrong also on data whose every sum of adjacent elements is "
            f"at most 3 ('steps' data, n={case.n}, {where}), so no rounding explains it")
        return Failure(Cause.LOGIC, text, k, got[k], want[k], detail,
                       reason=probe.reason if unwritten else failure.reason)
    signed = _signed_zero_told(target, case, x, failure, detail)
    if signed is not None:
        return signed
    p = SIGNIFICAND_BITS[x.dtype.name]
    if not np.isfinite(got[k]):
        reach = abs_sums(x, target.spec.inclusive)[k] / overflow_threshold(x.dtype.name)
        return Failure(Cause.PRECISION, f"{failure.diagnosis}: an infinity or NaN where no "
                       f"summation order can overflow (the prefix's magnitudes sum to "
                       f"{reach:.3g} of the overflow threshold), while data with tiny partial "
                       f"sums are exact: some intermediate has less range than "
                       f"{x.dtype.name} (a narrower type, or an overflow guard set too "
                       f"low){_narrower_words(x, got, want, target.spec.inclusive)}", k,
                       got[k], want[k], detail, reason=failure.reason)
    # At the smallest failing n one lossy step shows (one carry, say), its error at most
    # 2**-bits of what it rounds: the worst of 16 seeds comes within a few percent of that.
    worst = _relative_error(x, got, want, target.spec.inclusive)
    for seed in range(case.seed + 1, case.seed + 16):
        xs = replace(case, seed=seed).data("add") if draw is None else draw(seed)
        got_s, wide = target(xs), promoted(target, xs)
        worst = max(worst, _relative_error(wide, got_s, exact_answer(target, wide),
                                           target.spec.inclusive))
    bits = int(np.floor(-np.log2(worst))) if worst > 0 else p
    detail["behaves like bits"] = bits
    if bits < 4:
        return Failure(Cause.LOGIC, f"{failure.diagnosis}; {prefix_error(bits)}, too large "
                       f"for lost precision (data with tiny partial sums pass: an error that "
                       f"grows with the values)", k, got[k],
                       want[k], detail, reason=failure.reason)
    if bits >= p and failure.reason != Reason.ACCUMULATOR:
        # As precise as the type itself on every seed, yet beyond the bound of any order:
        # what is wrong is not a rounding but something added or left out (an offset).  A
        # declared wider accumulator's bound is far tighter: an error of the type's own
        # precision beyond it is a rounding in the type (or a cast that rounds twice).
        return Failure(Cause.LOGIC, f"{failure.diagnosis}; yet on 16 seeds the error stays "
                       f"within 2**-{bits} of the prefixes' magnitudes, {x.dtype.name}'s own "
                       f"precision: no lost precision explains it (a term added or left out, "
                       f"as an offset)", k, got[k], want[k], detail, reason=failure.reason)
    return Failure(Cause.PRECISION, f"{failure.diagnosis}; behaves like about {bits} significand "
                   f"bits ({x.dtype.name} has {p}), and data with tiny partial sums are "
                   f"exact{_narrower_words(x, got, want, target.spec.inclusive)}", k, got[k],
                   want[k], detail, reason=failure.reason)


def _signed_zero_told(target: Target, case: Case, x: np.ndarray, failure: Failure,
                      detail: dict[str, Any]) -> Failure | None:
    """A logic error told as a sign-of-zero test where the case's input holds -0.0, the
    target is wrong on it again, and right on the same input with each -0.0 made +0.0 (an
    equal value, so no rounding or order tells them apart)."""
    mine = x.astype(as_dtype(case.dtype))  # as the target got it: the promotion is exact
    minus = (mine == 0) & np.signbit(mine)
    if not minus.any():
        return None
    plus = np.where(minus, mine.dtype.type(0), mine)
    again, bad = run(target, mine)
    if bad is not None or judge_output(target, case, mine, again, attribute=False) is None:
        return None  # right when run again: not a test of the sign
    got, bad = run(target, plus)
    if bad is not None or judge_output(target, case, plus, got, attribute=False) is not None:
        return None
    k = failure.index
    return Failure(Cause.LOGIC, f"{failure.diagnosis}; right on the same input with each -0.0 "
                   f"made +0.0, an equal value: the scan treats -0.0 unlike +0.0 (a test of "
                   f"the sign bit or of the bits where one of value is due)", k,
                   failure.got, failure.expected, {**detail, "negative zeros": int(minus.sum())},
                   reason=failure.reason)


def _narrower_words(x: np.ndarray, got: np.ndarray, want: np.ndarray, inclusive: bool) -> str:
    """The narrower type a float sum was kept in (:func:`narrower_type`), in words; '' where
    none fits."""
    name = narrower_type(x, got, want, inclusive)
    return "" if name is None else (
        f"; every output is a {name} value where some inputs or exact prefixes are not: as if "
        f"summed or stored in {name} (largest finite value {float(finfo(name).max):,.0f})")


def _sum_failure(target: Target, x: np.ndarray) -> Failure | None:
    """The first output of a float sum of ``x`` (the input, in its own dtype) beyond the
    certificate or the bound, unattributed; the failed call's failure; None where right."""
    got, bad = run(target, x)
    if bad is not None:
        return bad
    wide = promoted(target, x)
    want = exact_answer(target, wide)
    return certificate_failure(target, wide, got, want) or bound_failure(target, wide, got, want)


def _subnormals_told(target: Target, case: Case, x: np.ndarray, got: np.ndarray,
                     want: np.ndarray, failure: Failure, detail: dict[str, Any]
                     ) -> Failure | None:
    """A float sum's failure on an input ``x`` with subnormals, every error of which reading
    them as zero accounts for, told by what the same input scaled by a power of two shows
    (:func:`scaled_out`, no rounding changed): subnormals read as zero where the least
    scaling that leaves none is right and a longer input with them fits that rule too;
    an intermediate with less exponent range than the type where only a scaling to about 1
    is right; else the scaled input's own failure, attributed (a logic error, or lost
    precision).  None where no scaling can be made, or none tells."""
    k = failure.index
    raw = x.astype(as_dtype(case.dtype))  # the promotion widened it exactly
    low = scaled_out(raw, least=True)
    low_wrong = low is None or _sum_failure(target, low[0]) is not None
    if not low_wrong and _flush_fits(target, raw):
        witness = subnormal_witness(x, failure, target.spec.inclusive)
        return Failure(Cause.PRECISION, f"{failure.diagnosis}: subnormals read as zero (DAZ or "
                       f"FTZ), and within the bound once subnormal inputs and results may be "
                       f"flushed, while the same input times 2**{low[1]}, which holds none, is "
                       f"right; a target that flushes by design declares "
                       f"subnormals='flush' (--subnormals flush); {witness or 'x has subnormals'}",
                       k, got[k], want[k], {**detail, "subnormals": "read as zero"},
                       reason=Reason.SUBNORMALS)
    high = scaled_out(raw, least=False)
    if high is None:
        return None
    big, s = high
    ran, bad = run(target, big)
    if bad is not None:
        return None
    wide = promoted(target, big)
    exact = exact_answer(target, wide)
    wrong = certificate_failure(target, wide, ran, exact) or bound_failure(target, wide, ran,
                                                                           exact)
    dt = x.dtype.name
    if wrong is None:
        if not low_wrong:
            return None
        least = f"times 2**{low[1]}, which holds no subnormal," if low else "scaled to hold none"
        return Failure(Cause.PRECISION, f"{failure.diagnosis}: not subnormals read as zero: the "
                       f"same input {least} is still wrong, and times 2**{s}, its largest "
                       f"magnitude near 1, right: some intermediate has less exponent range "
                       f"than {dt} and reads small normal numbers as zero (a narrower type, or "
                       f"an underflow guard set too high)", k, got[k], want[k],
                       {**detail, "scaled by 2**": s}, reason=failure.reason)

    def scaled_draw(seed: int) -> np.ndarray:
        other = replace(case, seed=seed).data("add")
        out = scaled_out(other, least=False)
        return other if out is None else out[0]

    told = _float_failure(target, replace(case, distribution="subnormal"), wide, ran, exact,
                          wrong, draw=scaled_draw)
    return Failure(told.cause, f"{told.diagnosis} (on the case's input times 2**{s}, which "
                   f"holds no subnormal: reading subnormals as zero does not explain it)",
                   k, got[k], want[k], {**detail, **told.detail, "scaled by 2**": s},
                   reason=told.reason)


def _flush_fits(target: Target, x: np.ndarray) -> bool:
    """Whether the target's sum of a longer input holding ``x``'s subnormals (its values
    twice, and one more) is right where subnormals may read as zero."""
    more = longer_input(x, target.spec.max_n)
    wrong = _sum_failure(target, more)
    if wrong is None:
        return True
    if wrong.index is None:
        return False
    wide = promoted(target, more)
    return flush_explains(target, wide, target(more), exact_answer(target, wide))


def _relative_error(x: np.ndarray, got: np.ndarray, want: np.ndarray, inclusive: bool) -> float:
    """The largest finite error of ``got`` as a fraction of its prefix's sum of magnitudes
    (the scale every partial sum of that prefix lives at)."""
    scale = abs_sums(x, inclusive)
    with np.errstate(invalid="ignore"):  # inf - inf: no finite error, left out below
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    ok = np.isfinite(err) & (scale > 0)
    return float(np.max(err[ok] / scale[ok], initial=0.0))


def _compensated_inf(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray,
                     k: int | None) -> Failure | None:
    """A NaN at output ``k`` of a sum whose exact prefix is an infinity reached by inputs of
    that sign alone: no order of plain additions gives NaN there, but a compensated (Kahan)
    sum's correction term computes (t - s) - y = inf - inf (pandas' groupby cumsum)."""
    if k is None or target.spec.family != "sum" or not (np.isnan(got[k]) and np.isinf(want[k])):
        return None
    upto = x[:k + 1] if target.spec.inclusive else x[:k]
    if np.isnan(upto).any() or (upto == -want[k]).any():
        return None
    return Failure(Cause.SPECIALS, f"NaN where the exact prefix is {want[k]} and no input is "
                   f"NaN or {-want[k]:+}: inf - inf, the running sum taken from itself once "
                   f"it is infinite (as inside a compensated (Kahan) sum, whose correction "
                   f"term does so)", k, got[k], want[k], {"compensated sum": "inf - inf"},
                   reason=Reason.SPECIALS)


def judge_output(target: Target, case: Case, x: np.ndarray, got: np.ndarray,
                 attribute: bool = True) -> Failure | None:
    """Everything a finite output must satisfy for the target's operator and dtype, with a
    float sum's failure attributed to a logic error or lost precision unless ``attribute``
    is False (used on twins and on repeated runs)."""
    x = promoted(target, x)
    want = exact_answer(target, x)
    if target.spec.family != "sum" or not is_float(x.dtype):
        return bits_differ(target, x, got, want)
    failure = certificate_failure(target, x, got, want) or bound_failure(target, x, got, want)
    return failure and (_float_failure(target, case, x, got, want, failure) if attribute
                        else failure)


#: The conventions a 1-D scan may follow other than its spec's: the field, the value that
#: declares it, what it computes (``first``: the first element a reverse output combines),
#: the flag, and the data its fresh inputs are drawn from (None: integers and values of both
#: signs, of every declared dtype; a distribution: that one, of the float dtypes alone).
CONVENTIONS = (
    ("inclusive", False, "an exclusive scan (output k combines x[0] .. x[k-1])", "--exclusive",
     None),
    ("inclusive", True, "an inclusive scan (output k combines x[0] .. x[k])", "--inclusive",
     None),
    ("reverse", True, "a reverse scan (output k combines x[{first}] .. x[n-1])", "--reverse",
     None),
    ("reverse", False, "a forward scan (output k combines x[0] .. x[{last}])", "--no-reverse",
     None),
    ("zeros", "either", "-0 and +0 as equal ({ties})", "--zeros either", "zeros"),
    # Another operator of the shared vocabulary (a cummax checked as the default sum, a
    # cumsum declared max): max and min are exact on every dtype, a float sum is read
    # within its rounding bound.
    ("op", "max", "a running maximum (each output the largest of its prefix)", "--op max", None),
    ("op", "min", "a running minimum (each output the smallest of its prefix)", "--op min", None),
    ("op", "add", "a running sum", "--op add", None),
)
#: Per operator, the compare-and-select whose ties of -0 and +0 keep the earlier operand and
#: the one whose ties take the later, ``a`` the running value and ``b`` the next element
#: (``max_np`` and ``min_np`` in core/combines.py: the earlier wins).
TIE_FUNCTORS = {"max": ("b > a ? b : a", "b >= a ? b : a"),
                "min": ("b < a ? b : a", "b <= a ? b : a")}


def zero_ties(spec: TargetSpec, x: np.ndarray, got: np.ndarray) -> str:
    """Which zero ``got``, a max or min scan of finite ``x`` under ``spec``, gives where
    its prefix ties -0 with +0, in words: the earlier or the later zero in scan order (with
    the functor that does so), or either where its outputs do both or hold no such tie."""
    xs, gs = (x[::-1], got[::-1]) if spec.reverse else (x, got)
    n = xs.size
    at = np.arange(n)
    zero = xs == 0
    # A zero answer of a max (min) scan of finite inputs: every element before the prefix's
    # first zero is below (above) it and none after is past it, so each later zero is a tie.
    first = np.minimum.accumulate(np.where(zero, at, n))
    last = np.maximum.accumulate(np.where(zero, at, -1))
    if not spec.inclusive:  # output k's prefix ends before x[k]
        first, last = np.r_[n, first[:-1]], np.r_[-1, last[:-1]]
    tie = (gs == 0) & (last >= 0)
    tie[tie] = np.signbit(xs[first[tie]]) != np.signbit(xs[last[tie]])
    sign = np.signbit(gs[tie])
    if spec.op not in TIE_FUNCTORS or not tie.any():
        return "a tie of zeros may give either"
    earlier, later = TIE_FUNCTORS[spec.op]
    if (sign == np.signbit(xs[first[tie]])).all():
        return (f"its ties of zeros keep the earlier, as {earlier} does for a running value a "
                f"and next element b")
    if (sign == np.signbit(xs[last[tie]])).all():
        return (f"its ties of zeros take the later, as {later} does for a running value a and "
                f"next element b")
    return "its ties of zeros give either, now the earlier, now the later"


def other_convention(target: Target, x: np.ndarray, got: np.ndarray, dtype: str
                     ) -> Failure | None:
    """The contract failure of a 1-D target whose outputs are another convention's
    (:data:`CONVENTIONS`) answer, and not its spec's, bit for bit or a float sum's within
    its rounding bound: on finite ``x`` (of input ``dtype``, promoted as the spec says) and
    on fresh inputs of every declared dtype (3, n, 2n + 1 and 257 elements within the
    spec's largest n; integers, and values of both signs; signed zeros for a zero order).
    None where none is, where a fresh call raises, on a view of the target (reversed,
    seeded), and on bool, whose max and min agree with too many wrong answers."""
    spec = target.spec
    # The forward view of a scan declared reverse (how a reverse scan is judged): a reverse
    # scan there is a forward one of the target's own.
    mirrored = (target.declared is not None and target.declared.reverse
                and replace(target.declared, reverse=False) == spec)
    if (spec.axis is not None or spec.segments is not None or spec.initial or spec.indices
            or target.declared not in (None, spec) and not mirrored or not x.size
            or dtype == "bool" or (is_float(x.dtype) and not np.isfinite(x).all())):
        return None
    for name, value, behaviour, flag, dist in CONVENTIONS:
        if getattr(spec, name) == value or (name == "reverse" and x.size < 2) or (
                dist is not None and not is_float(x.dtype)) or (
                mirrored and (name, value) != ("reverse", True)):
            continue
        try:
            other = replace(target, spec=replace(spec, **{name: value}))
        except ValueError:  # no reverse of a non-commutative operator, say
            continue
        # The fresh inputs only once the case fits: this runs on every failing case of a
        # search and of its shrinking, nearly all of which fit no other convention.
        if not _follows(target, other, name, x, got) or not all(
                _follows_on(target, other, name, v) for v in _fresh(spec, x.size, dist)):
            continue
        said = f"{name}={getattr(spec, name)}"
        if mirrored:  # told in the target's own terms; the fields stay the view's
            _, _, behaviour, flag, _ = next(c for c in CONVENTIONS if c[:2] == ("reverse", False))
            said = "reverse=True"
        behaviour = behaviour.format(first="k" if spec.inclusive else "k+1",
                                     last="k" if spec.inclusive else "k-1",
                                     ties=zero_ties(spec, x, got) if name == "zeros" else "")
        return Failure(Cause.CONTRACT, f"{behaviour}, where its spec declares "
                       f"{said}: declare {flag}",
                       detail={"contract": flag},
                       contract=Contract(behaviour, flag, ((name, value),)),
                       reason=Reason.UNDECLARED)
    return None


def _convention_or(failure: Failure | None, target: Target, x: np.ndarray, got: np.ndarray,
                   dtype: str) -> Failure | None:
    """``failure``, or where it is a logic error another convention explains (see
    :func:`other_convention`), that contract's failure, at the output ``failure`` found
    wrong (its value and the spec's beside it)."""
    if failure is None or failure.cause != Cause.LOGIC:
        return failure
    told = other_convention(target, x, got, dtype)
    if told is None:
        return failure
    return replace(told, index=failure.index, got=failure.got, expected=failure.expected)


def _fresh(spec: TargetSpec, n: int, dist: str | None = None) -> list[np.ndarray]:
    """The fresh inputs a convention read off a case of ``n`` elements must hold on: 3, n,
    2n + 1 and 257 elements within the spec's largest n, of every declared dtype but bool,
    integers and values of both signs; or, where ``dist`` names data, those of the float
    dtypes; the same for the same n."""
    rng = np.random.default_rng(n)
    sizes = [(3, "uniform"), (max(n, 3), "integers"), (2 * n + 1, "uniform"), (257, "uniform")]
    if dist is not None:
        sizes = [(m, dist) for m, _ in sizes]
    return [generate_data(rng, min(m, spec.max_n or m), d, data) for d in spec.dtypes
            if d != "bool" and (dist is None or is_float(d)) for m, data in sizes]


def _follows_on(target: Target, other: Target, name: str, v: np.ndarray) -> bool:
    """:func:`_follows` on the target's own output for the fresh input ``v``; False where
    the call raises or returns no right-shaped array: no evidence of a convention."""
    try:
        g, bad = run(target, v)
    except Exception:  # its failure is for the properties to find, on their own cases
        return False
    return bad is None and _follows(target, other, name, promoted(target, v), g, differs=False)


def _follows(target: Target, other: Target, name: str, x: np.ndarray, got: np.ndarray,
             differs: bool = True) -> bool:
    """Whether ``got``, ``target``'s output on ``x``, is ``other``'s answer (the same scan
    under another value of the spec's field ``name``), and (``differs``) not ``target``'s
    own: a fresh input where both agree (no tie of zeros, say) is no evidence against it."""
    if differs and _fits(target, x, got):
        return False
    if name == "reverse":  # a reverse scan is the forward one of the input flipped
        return _fits(target, x[::-1].copy(), got[::-1].copy())
    return _fits(other, x, got)


def _fits(target: Target, x: np.ndarray, got: np.ndarray) -> bool:
    """Whether ``got`` is ``target``'s right answer on ``x``: bit for bit under its rules,
    or a float sum's within the rounding bound."""
    want = exact_answer(target, x)
    if target.spec.family == "sum" and is_float(x.dtype):
        return bound_failure(target, x, got, want) is None
    return bool(agree(target, x, got, want).all())


@on_outputs
def integers_check(target: Target, case: Case, x: np.ndarray, got: np.ndarray,
                    want: np.ndarray) -> Failure | None:
    """``integers exact``: the exact answer bit for bit (two's-complement wrap), a
    narrowed type named as such, another convention (exclusive, reverse) named with its
    flag."""
    failure = _convention_or(bits_differ(target, x, got, want), target, x, got, case.dtype)
    if failure is not None and case.dtype != x.dtype.name and failure.contract is None:
        # The widening was exact: the promoted input goes back to the input's type as it was.
        _narrow_first(target, x.astype(as_dtype(case.dtype)), got, failure)
    if failure is not None and failure.contract is None:
        # A promotion's narrowing is _narrow_first's.
        _kept_in(target, x, got, want, failure, narrower=case.dtype == x.dtype.name)
    return failure


#: Float types an integer sum may be accumulated in, narrowest first.
INT_ACCUMULATORS = ("float32", "float64")


def _scanned_in(spec: TargetSpec, x: np.ndarray, dtype: np.dtype, out: np.dtype
                ) -> np.ndarray:
    """The scan ``spec`` declares of ``x`` carried out in ``dtype`` (its operator's ufunc,
    wrapping or rounding there; an exclusive one shifted in the identity, 0 or 1, also in
    bool), cast to ``out``."""
    ufunc = get_operator(spec.op).ufunc
    with np.errstate(all="ignore"):  # a wrap, or a float past ``out``'s range cast to it
        run = ufunc.accumulate(x.astype(dtype), dtype=dtype)
        if not spec.inclusive:
            run = shifted(run, ufunc.identity)
        return run.astype(out)


def _kept_in(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray,
             failure: Failure, narrower: bool) -> None:
    """Names the cause of a wrong integer scan of ``x`` whose every output is, bit for bit,
    its scan in another type cast back to its own: for a sum, a float type
    (:data:`INT_ACCUMULATORS`); with ``narrower``, for a sum or a product, a narrower integer
    type of the same signedness (inputs and running value wrapping there).  It was
    accumulated in the first that fits."""
    family = target.spec.family
    if family not in ("sum", "product") or x.dtype.kind not in "iu" or not x.size:
        return
    # Each accumulator with the words that say what it does to the integers it carries.
    kept = [(name, f", cast back to {got.dtype}",
             f" (integers past 2**{SIGNIFICAND_BITS[name]} are not all {name} values)")
            for name in INT_ACCUMULATORS if family == "sum"]
    sign = "u" if x.dtype.kind == "u" else ""
    kept += [(f"{sign}int{bits}", f" (wrapping modulo 2**{bits}), widened to {got.dtype}", "")
             for bits in (8, 16, 32) if narrower and bits < 8 * x.dtype.itemsize]
    for name, back_to, why in kept:
        back = _scanned_in(target.spec, x, as_dtype(name), got.dtype)
        if np.array_equal(back, got) and not np.array_equal(back, want):
            failure.diagnosis += (f"; every output is the running {family} of its inputs in "
                                  f"{name}{back_to}: as if accumulated in {name}{why}")
            return


def _narrow_first(target: Target, x: np.ndarray, got: np.ndarray, failure: Failure) -> None:
    """Names the cause of a wrong promoted sum or product of ``x`` (the input, in its own
    type) whose every output is the scan in that type (wrapping; in bool a logical or or
    and), widened afterwards."""
    spec = target.spec
    if spec.family not in ("sum", "product") or not x.size:
        return
    if np.array_equal(_scanned_in(spec, x, x.dtype, got.dtype), got):
        kept = {"sum": "a logical or", "product": "a logical and"}[spec.family] \
            if x.dtype == np.bool_ else f"wrapping modulo 2**{8 * x.dtype.itemsize}"
        failure.diagnosis += (f"; every output is the scan in {x.dtype.name} ({kept}), widened "
                              f"to {got.dtype.name} after: the promotion must come before the "
                              f"first {spec.op}")


def float_check(criterion: Callable[[Target, np.ndarray, np.ndarray, np.ndarray], Failure | None]
                 ) -> Check:
    """A float property from its ``criterion`` on the outputs; a failure is attributed
    (logic or precision) by the target's answer on ``steps`` data."""
    @on_outputs
    def check(target: Target, case: Case, x: np.ndarray, got: np.ndarray, want: np.ndarray
              ) -> Failure | None:
        if target.spec.family != "sum":  # max and min round nothing: exact, bit for bit
            return _convention_or(bits_differ(target, x, got, want), target, x, got,
                                  case.dtype)
        failure = criterion(target, x, got, want)
        if failure is None:
            return None
        failure = untold(failure, partial(_float_failure, target, case, x, got, want, failure))
        return other_convention(target, x, got, case.dtype) or failure

    return check


@on_outputs
def specials_check(target: Target, case: Case, x: np.ndarray, got: np.ndarray,
                    want: np.ndarray) -> Failure | None:
    """``nan and inf``: NaN and infinities where IEEE arithmetic (and the spec's NaN rule)
    puts them, and nowhere else."""
    # Finite outputs are judged elsewhere; here only where NaN and infinities must be.
    special = ~np.isfinite(want) | ~np.isfinite(got)
    ok = ~special | (np.isnan(got) & np.isnan(want)) | (got == want)
    # An overflow some summation order makes is rounding; the bound is computed only where
    # the specials differ (a right scan's never do).
    if target.spec.family == "sum" and not ok.all():
        inc = target.spec.inclusive
        ok |= classify(x, got, sequential_depths(x.shape[0], inc), inclusive=inc, exact=want,
                       flush=flushes(target, x.dtype)).verdicts == Verdict.OVERFLOWED
    spec = target.spec
    # Under nans='skip' NaNs are declared not to propagate: only the default rule is IEEE's.
    rule = ("NaN or infinity not propagated as IEEE arithmetic says"
            if spec.family == "sum" and spec.nans == "propagate" else
            f"NaN or infinity not where the spec puts them (nans={spec.nans!r}: "
            f"{NAN_RULES[spec.nans]}; infinities as IEEE arithmetic says)" if spec.family == "sum"
            else f"NaN or infinity not handled as the spec declares (nans={spec.nans!r}: "
            f"{NAN_RULES[spec.nans]}; an infinity orders beyond every number)")
    failure = first_bad(target, ok, got, want, rule, Cause.SPECIALS, Reason.SPECIALS)
    if failure is None or failure.reason == Reason.NEVER_WRITTEN:
        return failure
    return untold(failure, partial(_specials_failure, target, case, x, got, want, failure))


#: The finite inputs a wrong special is checked against, each as it is made from the case's
#: input (the case's "input made", which its reproducer applies) with the words that tell
#: it: a value bug either shows on (at or before the special) explains the special.
_TWINS = ((FINITE_TWIN, "the same input with its NaNs and infinities replaced by 1"),
          (SPECIAL_PLACES, "1 at each NaN or infinity of the input, 0 elsewhere"))


def _order_twin(dtype: Any) -> tuple[dict[str, float | None], str]:
    """The twin of a max or min scan's case that keeps its order: each infinity made the
    largest finite value of its sign, so that a bug of the values beyond some finite one (an
    identity of -1e30 where -inf is due) shows on it as it does on the infinity."""
    big = float(finfo(dtype).max)
    return (made_from_specials(TWIN_VALUE, big, -big),
            f"the same input with its infinities made +-{big:.7g}, the largest finite "
            f"{as_dtype(dtype).name} values, and its NaNs {TWIN_VALUE:g}")


def _specials_failure(target: Target, case: Case, x: np.ndarray, got: np.ndarray,
                      want: np.ndarray, failure: Failure) -> Failure:
    """Attribute a wrong NaN or infinity: a NaN rule the target keeps instead of its own, a
    logic error the same input without its specials shows (or, for a sum, the count of its
    specials: :data:`_TWINS`), a compensated sum (right on that input), or else the
    specials' own (independent of any logic error)."""
    kept = kept_rule_failure(target, x, got, failure.index)
    if kept is not None:
        return kept
    # A sum's twin keeps the case's finite values, whose rounding bound can hide a lost tile
    # of a long input; its count of specials cannot.
    twins = _TWINS if target.spec.family == "sum" else (
        (_order_twin(x.dtype), *_TWINS[:1]) if target.spec.family == "order" else _TWINS[:1])
    for made, told in twins:
        twin = remade(x, made)
        twin_got, twin_bad = run(target, twin)
        wrong = twin_bad or judge_output(target, case, twin, twin_got)
        if twin_bad is None and wrong is not None and wrong.cause == Cause.LOGIC:
            convention = other_convention(target, twin, twin_got, case.dtype)
            if convention is not None:  # the twin is another convention's scan: so is the case
                return convention
        # A value bug explains the wrong special at k only where the twin is wrong by then:
        # one that shows only later leaves every output up to k right, and the special is
        # its own.
        if wrong is not None and (wrong.index is None or failure.index is None
                                  or wrong.index <= failure.index):
            # Its index, got and expected are the twin's: the diagnosis says which input.
            wrong.diagnosis = (f"{wrong.diagnosis} (shown on {told}; the input drawn, with its "
                               f"specials, gets a wrong NaN or infinity there)")
            wrong.at["input made"] = made
            return wrong
    # inf - inf in a correction term is a compensated sum's, only where the rest is right
    # up to k (a carry that subtracts an infinite input makes the same NaN): like the
    # special below, no value bug explains it.
    failure = _compensated_inf(target, x, got, want, failure.index) or failure
    failure.independent = True
    return failure
