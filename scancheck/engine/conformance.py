"""Conformance of any scan implementation: a verdict per property and one diagnosis.

Each property (:mod:`scancheck.engine.properties`) searches for its smallest failing case
within a time :class:`~scancheck.engine.cases.Budget`, over sizes at every scale up to
2**24 for GPU targets and 2**20 for CPU ones (:mod:`scancheck.engine.search`); a case on
which the target gives no answer (:mod:`scancheck.engine.no_answer`: it raises, or runs out
of memory) moves the search to where it answers, a wrong answer ends it; the checks past
2**31 and 2**32 elements are in :mod:`scancheck.engine.large` (batches:
:mod:`scancheck.engine.large_batches`; segmented scans:
:mod:`scancheck.engine.large_segments`); the verdicts combine into one root cause
(:mod:`scancheck.engine.diagnosis`) in the target's :mod:`~scancheck.engine.report`.
:func:`check` runs in this process; :func:`~scancheck.isolation.parent.check_isolated` runs
the target in child processes, under compute-sanitizer too, so that a fault or a hang is a
verdict and the session goes on.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from functools import partial
from typing import Any

from ..targets.spec import TargetSpec, over_tuples, with_overrides
from ..targets.target import InputWritten, NotAnArray, Target, forward, seeded
from .cases import Budget, Case
from .checks import LARGE, not_applicable
from .diagnosis import INTERMITTENT, Cause, PropertyResult, Reason
from .large import LARGE_SIZES, check_large
from .large_batches import BATCH_CHECKS, check_batch
from .large_segments import SEGMENT_CHECKS, check_segments_large
from .no_answer import NoAnswer, own_error, raised, size_limit
from .options import CheckOptions, Plan
from .properties import (
    ACCUMULATION_KEY,
    ACCUMULATION_PROBE,
    PROPERTIES,
    TABLE,
    Accumulation,
    AccumulationFound,
    Failure,
    Untold,
    passing_probes,
)
from .properties.axes import front_axes
from .properties.base import Contract
from .properties.monoid_judgement import monoid_summary
from .properties.monoids import nonempty_batches
from .properties.rows import axis_told
from .report import ConformanceReport
from .search import search, shrink, smallest_failing
from .strategies import CONFIRMING

__all__ = ["LARGE", "PROPERTIES", "Budget", "CheckOptions", "ConformanceReport", "Plan",
           "PropertyResult", "check", "check_property", "not_applicable", "run_plan"]


def check_property(target: Target, prop: str, budget: Budget | None = None,
                   on_case: Callable[..., None] | None = None) -> PropertyResult:
    """Search within ``budget`` for the smallest case on which ``target`` breaks ``prop``
    (``on_case(n, dtype, data=..., seed=...)``, the case's description, is called before
    each case, ``on_case(n)`` by the checks past 2**31: a heartbeat for watchdogs, and where
    a fault stops the process, its case).  The
    target is handed copies (:meth:`Target.run`) and judged on its input as it was; one that
    writes into its input fails with that cause, wherever in the property the write shows.
    Where the target gives no answer (it refuses the empty input, raises, or runs out of
    memory) the search goes on where it answers, and the result keeps each such failure in
    ``more``; a wrong answer ends it.  The first call of each kind the target makes is
    charged only for what it takes beyond the second (:meth:`Target.uncharged`); the
    result's ``uncharged`` says how much was left out."""
    before = target.uncharged()
    try:
        result = _check_property(target, prop, budget, on_case)
    except InputWritten as exc:  # outside the search: a summary, a check past 2**31
        size = {"n": exc.shape[0]} if len(exc.shape) == 1 else {"shape": list(exc.shape)}
        result = PropertyResult(prop, "fail", exc.told, {**size, "dtype": exc.dtype,
                                                         **_written(exc).where()},
                                cause=Cause.INPUT_WRITTEN.name, independent=True,
                                reason=Reason.INPUT_WRITTEN.name)
    except NotAnArray as exc:  # outside the search: a summary, a check past 2**31
        result = PropertyResult(prop, "fail", str(exc), cause=Cause.LOGIC.name,
                                reason=Reason.NOT_AN_ARRAY.name)
    result.uncharged = round(target.uncharged() - before, 2)
    return result


def _written(exc: InputWritten) -> Failure:
    """The failure of a case on which the target wrote into its input."""
    shape = {"input shape": list(exc.shape)} if len(exc.shape) > 1 else {}
    return Failure(Cause.INPUT_WRITTEN, exc.told, at={**shape, **exc.where()}, independent=True,
                   reason=Reason.INPUT_WRITTEN)


def _check_property(target: Target, prop: str, budget: Budget | None,
                    on_case: Callable[..., None] | None) -> PropertyResult:
    budget = budget or Budget()
    if prop not in TABLE and prop not in LARGE:
        raise ValueError(f"property {prop!r} is unknown; allowed: "
                         f"{', '.join(PROPERTIES + LARGE)}")
    if target.unavailable:
        return PropertyResult(prop, "skip", f"not available here: {target.unavailable}")
    tuples = over_tuples(target.spec)  # judged in its own convention: no view of it
    if tuples and (prop in LARGE or not_applicable(target.spec, prop)):
        return PropertyResult(prop, "skip", not_applicable(target.spec, prop) or
                              "the checks past 2**31 take arrays of numbers, not tuples")
    if prop in SEGMENT_CHECKS:
        return check_segments_large(target, prop, on_case)
    if target.spec.segments is not None and prop in LARGE:
        return PropertyResult(prop, "skip", f"a segmented scan is checked past 2**31 by "
                              f"'{next(iter(SEGMENT_CHECKS))}'")
    # Checked as the forward scan it mirrors, indices mapped back (a segmented one judges
    # its own reverse: its description would have to be mirrored too).
    if target.spec.reverse and not tuples and target.spec.segments is None:
        return _mirrored(check_property(forward(target), prop, budget, on_case))
    if target.spec.initial:  # checked as a plain scan of [initial value, data...]
        return _seeded(check_property(seeded(target), prop, budget, on_case),
                       target.spec.inclusive)
    if prop in LARGE_SIZES:
        return check_large(target, prop, on_case)
    if prop in BATCH_CHECKS:
        return check_batch(target, prop, on_case)
    row = TABLE[prop]
    spec = target.spec
    why = not_applicable(spec, prop)
    if why:
        return PropertyResult(prop, "skip", why)
    # Over tuples, each monoid's leaves have their dtypes: the row's dtype only labels a case.
    dtypes = row.dtypes if tuples else tuple(d for d in row.dtypes if d in spec.dtypes)
    top = budget.top(spec.device, row.max_n, spec.max_n, row.cap(spec) if row.cap else None)

    def guarded(n: int, call: Callable[[], Failure | None]) -> Failure | None:
        """What ``call`` (a check, or the attribution it left) returns, on a case of ``n``
        elements; the failure of the call where the target wrote its input or raised."""
        try:
            return call()
        except InputWritten as exc:
            return _written(exc)
        except NotAnArray as exc:
            return Failure(Cause.LOGIC, str(exc), reason=Reason.NOT_AN_ARRAY)
        except Exception as exc:
            failure = raised(checked, exc, n)
            if failure is None:
                raise
            return failure

    checked = target  # the target as the search hands it cases (see front_axes)

    def check(case: Case) -> Failure | None:
        if on_case is not None:
            on_case(**case.describe())
        return guarded(case.n, partial(row.check, checked, case))

    def judged(target: Target, case: Case) -> Failure | None:
        """The check of ``case`` on ``target`` (the one searched, or another view of it),
        its failure attributed."""
        if on_case is not None:
            on_case(**case.describe())
        out = guarded(case.n, partial(row.check, target, case))
        return guarded(case.n, out.told) if isinstance(out, Untold) else out

    def told(case: Case, failure: Failure) -> Failure:
        """``failure``, found on ``case``, attributed where its check left that to be made
        (a 1-D case's wrong value, of a target of higher ranks only, as the axis it scans
        where that is another: :func:`~.properties.rows.axis_told`); a contract it names
        stands only where it makes the target right (see :func:`contract_checked`)."""
        out = guarded(case.n, failure.told) if isinstance(failure, Untold) else failure
        assert out is not None
        if prop in PREFIXED and not tuples:
            out = axis_told(checked, case.dtype, out)
        if out.cause == Cause.CONTRACT and out.contract is not None:
            out = contract_checked(out, case, checked, top, judged)
        return out

    if prop == "deterministic" and not spec.deterministic:
        seen = check(Case(top, dtypes[0], row.data_for(spec.op)[0], 0))
        differ = seen is not None and not isinstance(seen, NoAnswer)
        return PropertyResult(prop, "skip", "declared non-deterministic" + (
            f"; observed: bits differ between runs at n={top}" if differ else ""))
    # The same target and property share their failures across runs and runners.
    key = f"scancheck\0{target.locator or target.name}\0{prop}".encode()
    t0 = time.monotonic()
    own0, uncharged0 = target.spent[0], target.uncharged()
    empty, cap = spec.allows_empty, top
    earlier: list[PropertyResult] = []  # failures that moved the search, not ended it
    stats: dict[str, Any] = {"largest n": -1, "cases": 0, "seconds": 0.0}
    # Where a known bug showed on the target: checked before anything is drawn.
    first = tuple(Case(w.n, w.dtype, w.distribution, w.seed) for w in target.witnesses
                  if w.prop == prop and w.dtype in dtypes
                  and w.distribution in row.data_for(spec.op))
    while True:
        left = budget.seconds - (time.monotonic() - t0 - (target.uncharged() - uncharged0))
        # After a failure that moved it, the search goes on with what is left of the budget;
        # its ladder still runs whole, below the failure's size.
        found = search(check, dtypes, row.data_for(spec.op), cap,
                       replace(budget, seconds=max(left, 0.01)) if earlier else budget,
                       empty=empty, key=key, uncharged=target.uncharged,
                       first=tuple(c for c in first if c.n <= cap and (empty or c.n)))
        stats = {"largest n": max(stats["largest n"], found.largest_n),
                 "cases": stats["cases"] + found.cases,
                 "seconds": round(stats["seconds"] + found.seconds, 1)}
        if found.budget_spent:
            stats["budget spent"] = f"{budget.seconds:g} s"
        if found.short_of is not None:
            stats["short of n"] = found.short_of
        if found.failing is None:
            break
        result, moved = _failed(prop, found, check, told, stats, budget.seconds,
                                row.data_for(spec.op)[0])
        if result.why == Reason.MEMORY_TAKEN:
            # The GPU's memory taken elsewhere: no evidence either way, so the search stops
            # short, claiming nothing from this n on; a failure found before it stands.
            cap = min(cap, result.smallest_case["n"] - 1)
            stats["largest n"] = min(stats["largest n"], cap)
            taken = result.detail["memory taken"]
            if not earlier:
                return PropertyResult(prop, "partial", f"no failure up to n = {cap:,}; out of "
                                      f"memory at n = {cap + 1:,}, {taken}",
                                      detail={**stats, "memory taken": taken},
                                      reason=Reason.MEMORY_TAKEN.name)
            stats["memory taken"] = f"from n = {cap + 1:,}: {taken}"
            break
        if result.why == Reason.REFUSED_AXIS and not checked.front_axes:
            # A negative axis refused: the search goes on with every axis counted from the
            # front, and a wrong answer it finds there is told beside the refusal.
            earlier.append(result)
            checked = front_axes(checked)
            continue
        if result.why == Reason.EMPTY_BATCH and not checked.no_empty_batches:
            # Wrong on an empty batch: the search goes on with batches that hold elements,
            # and a wrong answer it finds there is told beside it.
            earlier.append(result)
            checked = nonempty_batches(checked)
            continue
        if not moved:  # a wrong answer: its search ends here
            result.more = earlier
            return _searched(result, earlier, empty, cap)
        earlier.append(result)
        if result.smallest_case["n"] == 0:
            empty = False  # the sizes from 1 up are still to be searched
        else:
            cap = result.smallest_case["n"] - 1
        if cap < 1:
            break
    if earlier:  # no wrong answer where the target answers: its last failure is the result
        result, result.more = earlier[-1], earlier[:-1]
        # Checked means answered: the sizes at and past a failure that moved the search only
        # raised.
        stats["largest n"] = min(stats["largest n"], cap)
        result.detail.update(stats)
        at = result.smallest_case or {}
        if (result.why == Reason.RAISED and cap >= 1
                and at.get("n") == cap + 1 == stats["largest n"] + 1):
            result.diagnosis += size_limit(check, Case(at["n"], at["dtype"], at["data"],
                                                       at["seed"]))
        return _searched(result, earlier, empty, cap)
    # The budget ran out on the ladder: nothing past its reach is told, and no probe below
    # (they run at the ladder's top, 2**20 elements for the accumulation probe) is run.
    if found.short_of is not None:
        # Neither the target nor the checking is told slow for a compile the budget left out.
        compiling = target.uncharged() - uncharged0
        return _unfinished(prop, stats, top, target.spent[0] - own0 - compiling,
                           time.monotonic() - t0 - compiling)
    if tuples:
        stats.update(monoid_summary(target))
    notes = []
    for dt, probe in ([] if tuples else passing_probes(target, prop, dtypes, top)):
        told = probe()
        failure = (None if dt is None or not isinstance(told, AccumulationFound)
                   else declared_accumulation(spec, dt, told))
        stats.update(told)
        if failure is not None:
            return PropertyResult(prop, "fail", failure, {"dtype": dt, "data":
                                  "the accumulation probe"}, stats,
                                  cause=Cause.PRECISION.name, independent=True,
                                  reason=Reason.ACCUMULATOR.name)
        if dt is not None:
            notes.append(f"{ACCUMULATION_KEY.format(dt)}: {told[ACCUMULATION_KEY.format(dt)]}")
    return PropertyResult(prop, "pass", detail=stats, notes=notes)


def contract_checked(failure: Failure, case: Case, target: Target, top: int,
                     judged: Callable[[Target, Case], Failure | None]) -> Failure:
    """``failure`` (of cause CONTRACT, found on ``case``) where the target, declared to keep
    the contract it names, is right on ``case``, on a longer case of the same data (2n + 1
    elements, within ``top`` and the spec's largest n) and, where the data have one, on
    their :data:`~scancheck.engine.strategies.CONFIRMING` kind: a contract explains a
    target's every answer, not one size's or one placing's.  Else the failure the
    declared target still shows, told as what it is (a logic error, say: a dtype that
    changes with n is no promotion).  A case with no answer refutes nothing, nor does
    another contract, except one that would declare back what the spec already says: a
    target that keeps one contract on some inputs (some sizes, say) and the spec's on
    others keeps neither, a logic error."""
    contract = failure.contract
    assert contract is not None
    try:
        declared = replace(target, spec=replace(target.spec, **dict(contract.fields)))
    except ValueError:  # no valid spec declares it here: nothing to check it by
        return failure
    if declared.spec.reverse and not target.spec.reverse and not over_tuples(declared.spec):
        declared = forward(declared)  # judged as check_property judges a reverse scan
    m = min(2 * case.n + 1, top, target.spec.max_n or top)
    longer = case.with_n(m) if m > case.n else replace(case, seed=case.seed + 1)
    others = [case, longer]
    if case.distribution in CONFIRMING:
        # Drawn whole: a tail of the draw (a dropped case's) would leave out the values the
        # confirming kind puts first.
        others.append(replace(longer, distribution=CONFIRMING[case.distribution], skip=0,
                              drawn=0))
    for other in others:
        wrong = judged(declared, other)
        if wrong is None or isinstance(wrong, NoAnswer):
            continue
        back = wrong.cause == Cause.CONTRACT and _declares_back(wrong, contract, target.spec)
        if wrong.cause == Cause.CONTRACT and not back:
            continue
        where = ("this case" if other is case else
                 f"a longer case (n = {other.n:,}, {other.distribution} {other.dtype} data)")
        same = other is case
        detail = {k: v for k, v in failure.detail.items() if k != "contract"}
        seen = f"{contract.behaviour} at n = {case.n:,}, as {contract.flag} would declare"
        # The one that keeps neither is said first: each half alone reads as a contract.
        text = (f"keeps neither on every input: {seen}, while {where} does as its spec "
                f"declares: {wrong.contract.behaviour}" if back else
                f"{seen}; so declared, {where} is still wrong: {wrong.diagnosis}")
        return Failure(Cause.LOGIC if back else wrong.cause, text,
                       wrong.index if same else failure.index,
                       wrong.got if same else failure.got,
                       wrong.expected if same else failure.expected,
                       {**detail, **(wrong.detail if same and not back else {})},
                       independent=wrong.independent and not back,
                       at=wrong.at if same else failure.at,
                       reason=Reason.WRONG_VALUE if back else wrong.reason)
    return failure


def _declares_back(wrong: Failure, contract: Contract, spec: TargetSpec) -> bool:
    """Whether ``wrong``'s contract sets some field ``contract`` sets back to ``spec``'s own
    value (declared raise, the longer case wraps as the spec first said)."""
    changed = dict(contract.fields)
    return wrong.contract is not None and any(
        name in changed and getattr(spec, name) == value for name, value in wrong.contract.fields)


def _unfinished(prop: str, stats: dict[str, Any], top: int, own: float,
                seconds: float) -> PropertyResult:
    """The result of a search whose bounded budget ran out on its ladder, no failure found:
    "slow" where the target's own calls took most of the time, "partial" where checking
    their answers did; either says how far it got, and claims nothing past it."""
    reached, short = stats["largest n"], stats["short of n"]
    slow = own >= seconds / 2
    who = (f"the target's own calls took {own:.1f} of its {seconds:.1f} s" if slow else
           f"checking the answers took {seconds - own:.1f} of its {seconds:.1f} s")
    return PropertyResult(prop, "slow" if slow else "partial",
                          f"no failure up to n = {reached:,}; the budget ran out before "
                          f"n = {short:,} of {top:,} ({who})", detail=stats)


def declared_accumulation(spec: TargetSpec, dtype: str, told: AccumulationFound
                          ) -> str | None:
    """What is wrong with a declared accumulator, from the accumulation probe's ``told``
    (None where it holds, or none is declared); an undeclared wider one is noted in
    ``told`` with the flag that declares it."""
    wider = dict(spec.accumulates).get(dtype)
    key = ACCUMULATION_KEY.format(dtype)
    seen = str(told.get(key, ""))
    if wider is None:
        acc = ACCUMULATION_PROBE[dtype][0]
        if told.outcome == Accumulation.WIDER:
            told[key] = f"{seen}: declare --accumulates {dtype}:{acc}"
        return None
    if told.outcome == Accumulation.NARROWER:
        return (f"declared accumulates {dtype}:{wider}, but on data whose every partial sum "
                f"is exact in {wider} {seen}")
    return None


#: The properties whose cases are 1-D inputs judged output by output, so that a failure
#: at output k may be cut to the input's first k + 1 elements (:meth:`Case.cut`).
PREFIXED = frozenset(("integers exact", "certified exact", "floats within bound",
                      "nan and inf", "products within bound", "logsumexp within bound",
                      "indices", "recurrence"))
#: A cut case's prefixes walked one by one up to this n (past it, bisected).
PREFIX_WALK = 300
#: The largest smallest case whose n is walked again on the property's plainest data.
PLAIN_WALK = 4096
#: The longest tail of a failing prefix tried alone: the values a wrong output needs (a
#: NaN and the value before it, say) sit just before it.
TAIL_WALK = 16
#: Runs of the smallest failing case again before it is told: one of them right makes the
#: failure intermittent.  A failure that comes in one run of two is seen right in one of
#: four more runs 94 times in 100; one that comes in nine runs of ten, 34 times.
RERUNS = 4
#: Causes a case's own evidence decides, which a run of the same input that comes out right
#: refutes: no rounding, NaN rule or contract comes and goes between runs.
_RERUN_CAUSES = (Cause.LOGIC, Cause.PRECISION, Cause.SPECIALS, Cause.CONTRACT)


def _failed(prop: str, found: Any, check: Callable[[Case], Failure | None],
            told: Callable[[Case, Failure], Failure], stats: dict[str, Any], seconds: float,
            plain: str) -> tuple[PropertyResult, bool]:
    """The failure ``found``, taken down to the smallest n known to fail (:func:`shrink`,
    from every case the search saw fail; a wrong answer along the residues of each block
    too, on the ``plain`` data where its own pass there, and with every smaller n checked
    while ``seconds`` last) and attributed there
    (``told``: the failures the search and the shrinking discard never are), as the
    property's result; and whether it moves the search rather than ends it (the target
    gave no answer there)."""
    case, failure = found.failing, found.failure
    minimal = True
    if case.n > 1 or len(found.failed) > 1:
        # Only the last failure: shrink's last that held is at the n it returns, or none
        # held (a case the search found, run again here).  Each may hold the arrays of a
        # case until it is told.
        last: dict[int, Failure] = {}

        def fails(c: Case) -> bool:
            f = check(c)
            if f is not None and f.reason == Reason.MEMORY_TAKEN and (
                    failure.reason != Reason.MEMORY_TAKEN):
                return False  # no evidence either way: the failure being shrunk stands
            if f is not None:
                last.clear()
                last[c.n] = f
            return f is not None

        # A case with no answer (an exception, memory) is where the target stops
        # answering, not a wrong answer of some sizes: its threshold is the search's.
        shrunk = shrink(fails, found.failed or [case], seconds,
                        bands=not isinstance(failure, NoAnswer), tails=prop in PREFIXED,
                        plain=plain if prop in PREFIXED else None)
        case, minimal = shrunk.case, shrunk.minimal
        again = last.get(case.n) or (None if case == found.failing else check(case))
        if again is not None:
            failure = again
        elif case != found.failing:  # it failed once only (a race?): the one found stands
            case, minimal = found.failing, False
        k = failure.index
        if (prop in PREFIXED and not isinstance(failure, NoAnswer) and k is not None
                and k + 1 < case.n and fails(case.cut(k + 1))):
            # Outputs 0 .. k of a 1-D scan are a function of x[0 .. k]: where that prefix
            # alone fails, its own prefixes are walked (the data drawn at another n are
            # other values, so a failure at output 0, say, may first show at a large n).
            case = smallest_failing(fails, case.cut(k + 1), PREFIX_WALK)
            failure, minimal = last.get(case.n) or failure, case.n <= PREFIX_WALK
    assert failure is not None
    right = 0
    if (prop != "deterministic" and not isinstance(failure, NoAnswer)
            and failure.cause in _RERUN_CAUSES and failure.rerun_refutes):
        right = sum(check(case) is None for _ in range(RERUNS))
    if right:
        failure = _intermittent(failure, right)
    else:
        case, failure, walked = _plain_data(prop, case, told(case, failure), check, told, plain,
                                            seconds)
        minimal = minimal or walked
        case, failure = _tail(prop, case, failure, check, told)
    return PropertyResult(prop, "fault" if failure.cause == Cause.FAULT else "fail",
                          failure.diagnosis, {**case.describe(), **failure.where()},
                          {**failure.detail, **stats}, cause=failure.cause.name,
                          reason=failure.reason.name, independent=failure.independent,
                          minimal=minimal), isinstance(failure, NoAnswer)


def _plain_data(prop: str, case: Case, failure: Failure,
                check: Callable[[Case], Failure | None],
                told: Callable[[Case, Failure], Failure], plain: str, seconds: float
                ) -> tuple[Case, Failure, bool]:
    """The smallest case of the property's ``plain`` data (values a reader follows: integers
    below 1,000, steps of at most 3) that fails, where that failure is told as ``failure``
    is and comes at the case's n or below: a logic error found on 'uniform' int32 data,
    whose sums wrap to numbers of ten digits, is shown on small ones, and one of N-D rows
    found on subnormals (which read as a flush to zero) on integers.  Every smaller n of
    the plain data is checked first (True: the case returned is the smallest of its data);
    ``case`` and ``failure`` (False) where the walk meets another failure first, passes the
    case's n, or outlasts ``seconds``."""
    if (prop not in (*PREFIXED, "rows") or isinstance(failure, NoAnswer)
            or failure.cause != Cause.LOGIC or case.distribution == plain
            or case.n > PLAIN_WALK):
        return case, failure, False
    deadline = time.monotonic() + seconds
    for n in range(1, case.n + 1):
        if time.monotonic() > deadline:
            break
        shown = Case(n, case.dtype, plain, case.seed)
        wrong = check(shown)
        if wrong is None:
            continue
        if not isinstance(wrong, NoAnswer):
            wrong = told(shown, wrong)
            if failure.told_alike(wrong):
                return shown, wrong, True
        break
    return case, failure, False


def _tail(prop: str, case: Case, failure: Failure, check: Callable[[Case], Failure | None],
          told: Callable[[Case, Failure], Failure]) -> tuple[Case, Failure]:
    """The shortest tail of ``case`` (its input less its first elements, at most
    :data:`TAIL_WALK` kept) that fails told as ``failure`` is; ``case`` and ``failure``
    where none does.  A NaN an output gets wrong shows alone, where the prefix walk kept
    the values before it; a tail told otherwise (too short to refute a contract, say) is no
    smaller case of the same failure."""
    if not (prop in PREFIXED and not isinstance(failure, NoAnswer) and case.n > 1
            and failure.index == case.n - 1):
        return case, failure
    for m in range(1, min(case.n, TAIL_WALK + 1)):
        tail = case.dropped(case.n - m)
        wrong = check(tail)
        if wrong is None or isinstance(wrong, NoAnswer):
            continue
        wrong = told(tail, wrong)
        if failure.told_alike(wrong):
            return tail, wrong
    return case, failure


def _intermittent(failure: Failure, right: int) -> Failure:
    """``failure``, whose case came out right in ``right`` of :data:`RERUNS` more runs, as a
    logic error that comes and goes: no attribution by other data is made (a probe run would
    see whichever runs it happened to get)."""
    return Failure(Cause.LOGIC, f"{failure.diagnosis}; right in {right} of {RERUNS} more runs "
                   f"of the same input: {INTERMITTENT}", failure.index,
                   failure.got, failure.expected, failure.detail,
                   at={**failure.at, "reruns right": f"{right} of {RERUNS}"},
                   allowed=failure.allowed, reason=failure.reason)


def _searched(result: PropertyResult, earlier: list[PropertyResult], empty: bool,
              cap: int) -> PropertyResult:
    """``result``, saying where its search went on after the failures that moved it."""
    if earlier:
        why = "; ".join(
            f"out of memory at n = {f.smallest_case['n']:,}" if f.cause == Cause.RESOURCE.name
            else f"wrong on an empty batch at n = {f.smallest_case['n']:,}"
            if f.why == Reason.EMPTY_BATCH
            else "the empty input refused" if f.smallest_case["n"] == 0
            else f"raised at n = {f.smallest_case['n']:,}" for f in earlier)
        lo = 0 if empty else 1
        result.detail["searched"] = f"n = {lo} to {cap:,} ({why})" if cap >= lo else why
    return result


def _steps_renamed(diagnosis: str, index: Callable[[int, int], int]) -> str:
    """``diagnosis`` with the output its 'steps' probe names (of a 1-D case of n elements)
    renamed ``index(n, k)``: a view's output told in the target's own terms."""
    return re.sub(r"\('steps' data, n=(\d+), index (\d+)\)", lambda m: (
        f"('steps' data, n={m[1]}, index {index(int(m[1]), int(m[2]))})"), diagnosis)


def _mirrored(result: PropertyResult) -> PropertyResult:
    """A forward view's result told in the reverse scan's own indices (output n-1-k)."""
    case = result.smallest_case
    if case and "index" in case:
        length = case["shape"][case["axis"]] if "shape" in case else case["n"]
        case["index"] = length - 1 - case["index"]
        case["reversed"] = True  # the target was handed the case's data reversed
        result.detail["indices"] = "the reverse scan's own (output k combines x[k:])"
        result.diagnosis = _steps_renamed(result.diagnosis, lambda n, k: n - 1 - k)
    return result


def _seeded(result: PropertyResult, inclusive: bool) -> PropertyResult:
    """A seeded view's result told in the target's own terms: element 0 of a case is the
    initial value, the rest its input."""
    case = result.smallest_case
    if case and "index" in case:
        case["index"] -= inclusive  # the view's output 0 is the initial value itself
        result.diagnosis = _steps_renamed(result.diagnosis, lambda n, k: k - inclusive)
    if result.status != "skip":
        result.detail["initial value"] = ("element 0 of each case's data; the target scans "
                                          "the rest")
    return result


def run_plan(target: Target, plan: Plan, on_event: Callable[..., None] | None = None,
             contain: bool = True) -> list[PropertyResult]:
    """The properties of ``plan`` checked on ``target`` in order, each within its share of
    the plan's budget (:meth:`~scancheck.engine.options.Plan.share`): the one loop of a check,
    in this process and in each child of an isolated one.  ``on_event(kind, **what)`` is told
    as it happens: ``"start"`` (``property``), ``"case"`` (``n`` and, where the case has them,
    ``dtype``, ``data``, ``seed``, before each case: a heartbeat for watchdogs) and ``"result"`` (``result``,
    the PropertyResult).  With ``contain``, an exception that ends a property (a GPU
    target's, or one raised outside a case) is that property's fault; without, it ends the
    loop (a child's parent reports it and goes on in a fresh process).  One that scancheck's
    own code raised (:func:`~.no_answer.own_error`) is neither: that property is
    "partial", claiming nothing, and the loop goes on."""
    if not plan.empty:  # n = 0 broke the target in an earlier run: from n = 1
        target = replace(target, spec=replace(target.spec, allows_empty=False))
    last: dict[str, Any] = {}  # the case the property is in: a fault that ends it was there

    def on_case(n: int, dtype: str | None = None, **case: Any) -> None:
        last.clear()
        last.update(n=n, **({"dtype": dtype} if dtype else {}), **case)
        if on_event is not None:
            on_event("case", **last)

    results = []
    uncharged0 = target.uncharged()  # this plan's: a target checked before had its own
    for k, p in enumerate(plan.properties):
        if on_event is not None:
            on_event("start", property=p)
        start = time.time()
        last.clear()
        try:
            # A property's share of the time left: a first call's compile is left out of it.
            result = check_property(
                target, p, plan.share(k, start - (target.uncharged() - uncharged0)), on_case)
        except Exception as exc:  # a target that raises is a verdict, not a crash of ours
            where = own_error(target, exc)
            if where is not None:  # ours: nothing claimed either way, the next property runs
                at = f" at n = {last['n']:,}" if "n" in last else ""
                result = PropertyResult(
                    p, "partial", f"scancheck's own code raised {type(exc).__name__} "
                    f"({str(exc)[:200]}) at {where}{at}: a bug in scancheck, not in the "
                    f"target; nothing is claimed for this property (please report it)",
                    detail={"largest n": 0, "raised at": where}, reason=Reason.OWN_ERROR.name)
            elif not contain:
                raise
            else:
                result = PropertyResult(p, "fault", f"{type(exc).__name__}: {str(exc)[:300]}",
                                        dict(last) or None, cause=Cause.FAULT.name)
        result.seconds = round(time.time() - start, 2)
        results.append(result)
        if on_event is not None:
            on_event("result", result=result)
    return results


def check(target: Target, properties: tuple[str, ...] | None = None, large: bool | None = False,
          budget: Budget | None = None, *, options: CheckOptions | None = None
          ) -> ConformanceReport:
    """Check ``target`` in this process against ``properties`` (None: every one; past 2**31
    and 2**32 elements too if ``large``; None: for a GPU target), each within ``budget``, or
    as ``options`` say in their place (a :class:`~scancheck.engine.options.CheckOptions`,
    whose ``seconds`` bound the whole check, and whose ``spec`` and ``overrides`` replace the
    target's spec; the fields of child processes play no part here).  An exception that
    ends a property (a GPU target's, or one raised outside a case) is reported as that
    property's fault; an unknown property's name is a ValueError naming it."""
    if not isinstance(target, Target):
        raise TypeError(f"target={target!r} must be a Target, as Target('mine', fn, "
                        f"TargetSpec(...)); check_isolated() takes a target's name")
    if options is None:
        options = CheckOptions(properties=properties, large=large, budget=budget)
    elif not isinstance(options, CheckOptions):
        raise TypeError(f"options={options!r} must be a CheckOptions")
    elif (properties, large, budget) != (None, False, None):
        raise TypeError("check() takes properties, large and budget, or options holding "
                        "them, not both")
    t0 = time.time()
    if options.spec is not None or options.overrides:
        target = replace(target, spec=with_overrides(options.spec or target.spec,
                                                     dict(options.overrides), target.name))
    large = target.spec.device == "gpu" if options.large is None else options.large
    names = options.checked_properties() + (LARGE if large else ())
    until = None if options.seconds is None else t0 + options.seconds
    results = run_plan(target, Plan(names, options.budget, until))
    return ConformanceReport(target.name, asdict(target.spec), results, time.time() - t0,
                             locator=target.locator)
