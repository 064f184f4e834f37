"""Declared NaN rules in the properties: each case's NaN inputs judged through
:func:`~scancheck.targets.contracts.nan_view` (the rule's own outputs first, then the rest as
the scan of the NaN-free input), and a target that keeps another rule than it declares
named by the rule it keeps, with the flag that declares it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ...core.arrays import same_bits
from ...core.dtypes import is_float
from ...core.operators import get_operator
from ...oracle.bounds import Verdict, classify, sequential_depths
from ...oracle.exact import exact_scan
from ...oracle.products import judge_products
from ...targets.contracts import ALTERNATIVES, BEHAVIOUR, NAN_RULE_OPS, nan_view, rule_owes, viewed
from ...targets.spec import TargetSpec
from ...targets.target import Target
from ..diagnosis import Cause, Reason
from .base import Contract, Failure
from .extremes import extreme_agree
from .subnormals import flushes


def declared_view(target: Target, x: np.ndarray, got: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray] | Failure:
    """``(x, got)`` as the properties judge them under the target's NaN rule: unchanged
    under "propagate", else through :func:`nan_view`; a failure where an output the rule
    decides is wrong, naming the rule the target keeps where one explains the whole row."""
    spec = target.spec
    if not viewed(spec) or got.shape != x.shape:
        return x, got
    if spec.nans == "ignore" and x.ndim == 1 and np.isnan(x).any() and not np.isnan(x[0]):
        # Data rarely open with NaN: the same input with its first element, then its first
        # two, NaN shows what an all-NaN prefix holds (a target may get one length right).
        for m in (1, 2):
            lead = x.copy()
            lead[:m] = np.nan
            told = declared_view(target, lead, target(lead))
            if isinstance(told, Failure):
                told.diagnosis += (f" (the case's input with its first "
                                   f"{'element' if m == 1 else 'two elements'} NaN)")
                told.at["lead nans"] = m  # the input a reproducer rebuilds
                return told
    clean, filled, wrong, rule = nan_view(spec, x, got)
    if not rule or (not wrong.any() and _right(spec, target, clean, filled)):
        return clean, filled  # no NaN in x, or the rule kept (a wrong answer of the rest
        # without NaN is the property's to judge then, with its own criteria and words)
    if wrong.any():
        k = int(np.flatnonzero(wrong.ravel())[0])
    else:
        bad = ~np.isclose(filled, _answer(spec, clean), equal_nan=True)
        k = int(np.flatnonzero(bad.ravel())[0]) if bad.any() else 0
    kept = kept_rule_failure(target, x, got, k)
    if kept is not None:
        return kept
    if not wrong.any():
        return clean, filled
    return Failure(Cause.SPECIALS, f"NaN rule broken: expected {rule}", k,
                   got.ravel()[k], rule_owes(spec), reason=Reason.NAN_RULE)


def kept_rule_failure(target: Target, x: np.ndarray, got: np.ndarray, k: int | None
                      ) -> Failure | None:
    """Where ``got`` keeps another NaN rule than the target declares, the failure at output
    ``k``: the contract naming that rule, or, where the target tells NaNs apart by their
    bits, that (a rule is a contract only if kept for every NaN); None where none is kept,
    or where the rule is no contract of the target's (:func:`rule_stands`)."""
    kept = nan_rule_kept(target, x, got)
    if kept is None:
        return None
    # Only a 1-D case is called again with other NaNs: an N-D one is the rows property's,
    # whose calls name an axis.
    told = nan_bits_told_apart(target, x, got) if x.ndim == 1 else None
    if told is not None:
        return told
    if x.ndim == 1:
        kept = rule_stands(target, kept, _twin_call(target, x), _longer_call(target, x))
    return None if kept is None else contract_failure(target, kept, k, got, x)


#: What a NaN or infinite input is made in the twin of a case: finite in every float type.
TWIN_VALUE = 1.0


def made_from_specials(nan: float, pos: float, neg: float, finite: float | None = None
                       ) -> dict[str, float | None]:
    """How an input judged in a case's place is made from the case's (:func:`remade`): each
    NaN, +inf and -inf replaced by a number, and each finite value kept (``finite`` None) or
    made ``finite``."""
    return {"nan": nan, "+inf": pos, "-inf": neg, "finite": finite}


def remade(x: np.ndarray, made: dict[str, float | None]) -> np.ndarray:
    """``x`` made as :func:`made_from_specials`'s ``made`` says, in ``x``'s dtype."""
    finite = x if made["finite"] is None else x.dtype.type(made["finite"])
    return np.where(np.isnan(x), made["nan"], np.where(np.isposinf(x), made["+inf"], np.where(
        np.isneginf(x), made["-inf"], finite))).astype(x.dtype)


#: The finite twin: every NaN and infinity made :data:`TWIN_VALUE`, the rest as it is (the
#: same sizes and places, and nothing a NaN rule decides: infinities of both signs make a
#: NaN of their own).
FINITE_TWIN = made_from_specials(TWIN_VALUE, TWIN_VALUE, TWIN_VALUE)
#: 1 where the input holds a NaN or an infinity, 0 elsewhere: each prefix sum is a count,
#: exact in any order while it fits the significand (2048 in float16), so a sum that loses
#: or misplaces a special's tile shows on it even where the finite twin's values hide the
#: loss within the rounding bound.
SPECIAL_PLACES = made_from_specials(1.0, 1.0, 1.0, finite=0.0)


def finite_twin(x: np.ndarray) -> np.ndarray:
    """``x`` made as :data:`FINITE_TWIN`."""
    return remade(x, FINITE_TWIN)


def longer_input(x: np.ndarray, max_n: int | None) -> np.ndarray:
    """A second input, longer along the last axis than ``x`` where ``max_n`` allows, holding
    ``x``'s values (its NaNs too) twice and one more: 2n + 1 elements, whose tiles and
    blocks fall otherwise than ``x``'s; where no longer one is allowed, ``x`` rotated by
    half its length."""
    n = x.shape[-1]
    m = 2 * n + 1 if max_n is None else min(2 * n + 1, max_n)
    if m <= n:
        return np.roll(x, n // 2, axis=-1)
    return np.concatenate([x, x, x[..., :1]], axis=-1)[..., :m]


Call = Callable[[], "tuple[np.ndarray, np.ndarray] | None"]


def _twin_call(target: Target, x: np.ndarray) -> Call:
    twin = finite_twin(x)
    return lambda: _answer_of(target, twin)


def _longer_call(target: Target, x: np.ndarray) -> Call:
    more = longer_input(x, target.spec.max_n)
    return lambda: _answer_of(target, more)


def _answer_of(target: Target, x: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(x, the target's output)``, or None where it gives no array of ``x``'s shape."""
    try:
        got = np.asarray(target(x))
    except Exception:  # noqa: BLE001 - no answer, no evidence for the rule
        return None
    return (x, got) if got.shape == x.shape else None


def rule_stands(target: Target, flags: str, twin: Call, longer: Call) -> str | None:
    """Those of ``flags`` (NaN rules under which a case's output is right) that are the
    target's contract, not a wrong answer that reads like one: the same input with its
    NaNs and infinities made finite (``twin``: its input and output) is scanned right, and each rule holds
    on a second, longer input (``longer``) too.  None where none stands: a logic error
    that drops an offset can leave outputs that one NaN rule happens to fit."""
    ran = twin()
    if ran is None or not _right(target.spec, target, *ran):
        return None
    ran = longer()
    kept = None if ran is None else nan_rule_kept(target, *ran)
    if kept is None:
        return None
    held = kept.split(" or ")
    both = [f for f in flags.split(" or ") if f in held]
    return " or ".join(both) or None


def nan_bits_told_apart(target: Target, x: np.ndarray, got: np.ndarray) -> Failure | None:
    """The failure of a target whose answer changes when every NaN input is made one NaN of
    :func:`~scancheck.engine.strategies.nans` (quiet, sign bit set, a payload): IEEE
    arithmetic has no rule that tells NaNs apart by their sign or payload (None where the
    input holds no NaN, or every answer stays: bit for bit, or for a target declared
    non-deterministic, its NaN and infinities)."""
    from ..strategies import nans

    uint = np.dtype(f"u{x.dtype.itemsize}")
    at = np.isnan(x)
    if not at.any():
        return None
    for nan in nans(x.dtype):
        variant = np.where(at, nan, x).astype(x.dtype)
        if (variant.view(uint) == x.view(uint)).all():
            continue
        try:
            other_got = np.asarray(target(variant))
        except Exception:  # an answer to a NaN it refuses is the search's to judge
            continue
        if other_got.shape != got.shape or other_got.dtype != got.dtype:
            continue
        same = same_bits(other_got, got)
        if not target.spec.deterministic:
            # Its finite outputs may round otherwise from run to run: only a NaN or an
            # infinity that comes or goes tells the NaN inputs apart.
            with np.errstate(invalid="ignore"):
                same |= np.isfinite(other_got) & np.isfinite(got)
        differ = np.flatnonzero(~same)
        if differ.size:
            k, j = int(differ[0]), int(np.flatnonzero(at)[0])
            bits = f"0x{{:0{2 * x.dtype.itemsize}x}}"
            return Failure(Cause.SPECIALS, f"NaN inputs told apart by their bits: input {j} is "
                           f"the NaN {bits.format(int(x.view(uint)[j]))}, and output {k} is "
                           f"{got[k]}, {other_got[k]} once every NaN input is the NaN "
                           f"{bits.format(int(variant.view(uint)[j]))}; no NaN rule tells a "
                           f"NaN's sign or payload apart", k, got[k], other_got[k],
                           reason=Reason.NAN_RULE)
    return None


def _answer(spec: TargetSpec, x: np.ndarray) -> np.ndarray:
    """A float64 reference of the scan of NaN-free ``x`` (where a failure shows, no more)."""
    wide = x.astype(np.float64)
    with np.errstate(all="ignore"):
        return get_operator(spec.op).ufunc.accumulate(wide, axis=-1)


def contract_failure(target: Target, flags: str, k: int, got: np.ndarray, x: np.ndarray
                     ) -> Failure:
    """The failure of a target that keeps the NaN rule ``flags`` declares, not its own."""
    spec = target.spec
    own = f"nans={spec.nans!r}" + (f", nan_prefix={spec.nan_prefix!r}"
                                   if spec.nans == "ignore" else "")
    first, *others = flags.split(" or ")
    more = (f" (or {' or '.join(others)}: this case does not tell them apart)"
            if others else "")
    return Failure(Cause.CONTRACT, f"{BEHAVIOUR[first]}, where its spec declares {own}: "
                   f"declare {first}{more}", k, got.ravel()[k], x.ravel()[k],
                   {"contract": flags},
                   contract=Contract(BEHAVIOUR[first], first,
                                     tuple(dict(ALTERNATIVES)[first].items())),
                   reason=Reason.UNDECLARED)


def nan_rule_kept(target: Target, x: np.ndarray, got: np.ndarray) -> str | None:
    """The flags of each NaN rule other than the declared one under which ``got`` is a
    right scan of ``x`` (1-D, or rows along the last axis), joined by " or " (a case may
    not tell them apart), by the operator's criteria (add within the any-order bound, mul
    by the products' judge, max and min exact); None where none is, or ``x`` has no NaN."""
    spec = target.spec
    if spec.op not in NAN_RULE_OPS or not is_float(x.dtype) or (
            got.shape != x.shape or not np.isnan(x).any()):
        return None
    kept = _kept(target, x, got)
    if len(kept) > 1 and x.ndim == 1 and not np.isnan(x[0]):
        # An input opening with NaN shows what an all-NaN prefix holds, which tells the
        # prefix rules apart (declared_view does the same for the declared rule).
        lead = x.copy()
        lead[0] = np.nan
        try:
            told = _kept(target, lead, np.asarray(target(lead)))
        except Exception:  # noqa: BLE001 - a refusal tells nothing: the case's rules stand
            told = kept
        kept = [flags for flags in kept if flags in told] or kept
    return " or ".join(kept) or None


def _kept(target: Target, x: np.ndarray, got: np.ndarray) -> list[str]:
    """The flags of each NaN rule other than the declared one under which ``got`` is a
    right scan of ``x``."""
    spec = target.spec
    kept: list[str] = []
    for flags, fields in ALTERNATIVES:
        if all(getattr(spec, f) == v for f, v in fields.items()):
            continue
        try:
            alt = replace(spec, **fields)
            if target.declared is not None:  # the flag must fit what the user declared:
                replace(target.declared, **fields)  # skip is no rule of an initial value
        except ValueError:
            continue
        xs, gs = x, got
        if viewed(alt):
            xs, gs, wrong, _ = nan_view(alt, x, got)
            if wrong.any():
                continue
        if _right(alt, target, xs, gs):
            kept.append(flags)
    return kept


def _right(spec: TargetSpec, target: Target, x: np.ndarray, got: np.ndarray) -> bool:
    """Whether ``got`` is a right scan of ``x`` under ``spec`` by its operator's criteria."""
    flush = flushes(target, x.dtype)
    rows = x.reshape(-1, x.shape[-1]) if x.ndim > 1 else x[None, :]
    outs = got.reshape(rows.shape)
    if spec.family == "order":
        return bool(extreme_agree(spec, rows, outs, flush)[0].all())
    if spec.family == "product":
        return bool(judge_products(rows, outs, spec.inclusive, flush=flush).ok.all())
    for row, out in zip(rows, outs):
        want = exact_scan(row, inclusive=spec.inclusive)
        rep = classify(row, out, sequential_depths(row.shape[0], spec.inclusive),
                       inclusive=spec.inclusive, exact=want, flush=flush)
        if (rep.verdicts == Verdict.BEYOND_BOUND).any():
            return False
    return True
