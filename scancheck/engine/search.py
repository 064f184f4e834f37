"""The search for a property's smallest failing case, within a time budget.

:func:`search` checks the cases a known bug was seen on (its witnesses) first, then always
walks a ladder of one edge per scale (:func:`~scancheck.engine.cases.ladder`),
smallest first, up to the largest n, then lets Hypothesis draw cases until the
:class:`~scancheck.engine.cases.Budget` is spent, each scale about as often as it is cheap
(the time, not the count, shared among the scales), and beside them sweeps the residues of
each scale; the cases that failed before are tried first.  :func:`shrink` takes a failure
down to the smallest n known to fail, and says whether every smaller n was checked.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
from hypothesis import HealthCheck, find, settings
from hypothesis.errors import NoSuchExample
from hypothesis.reporting import with_reporter

from ..core.database import example_database, private_storage
from .cases import (
    DESCENT_LOG2,
    SWEEP_SHARE,
    Budget,
    Case,
    Sweep,
    cases,
    companions,
    ladder,
    share_time,
)
from .strategies import SWEPT

F = TypeVar("F")



class _Spent(BaseException):
    """Raised inside Hypothesis's search when the budget is spent: a BaseException, so the
    engine stops at once instead of trying to shrink it as a failure."""



class _Found(BaseException):
    """Raised inside Hypothesis's search when a companion case fails: the example it was
    drawn for passed, so Hypothesis has nothing to shrink (:func:`smallest_failing` takes
    the case down)."""



@dataclass
class SearchResult(Generic[F]):
    """What a search found: the failing case and its failure (or None), and what it spent."""

    failing: Case | None
    failure: F | None
    cases: int
    largest_n: int
    seconds: float
    budget_spent: bool
    #: The n of the first rung of the ladder a bounded budget left unrun (None: the ladder
    #: reached the largest n): nothing at or past it was checked.
    short_of: int | None = None
    #: Every case the search saw fail, in the order found (``failing`` the last).
    failed: list[Case] = field(default_factory=list)



def search(check: Callable[[Case], F | None], dtypes: tuple[str, ...],
           distributions: tuple[str, ...], max_n: int, budget: Budget, empty: bool = True,
           on_case: Callable[[Case], None] | None = None, key: bytes | None = None,
           uncharged: Callable[[], float] | None = None, first: tuple[Case, ...] = ()
           ) -> SearchResult[F]:
    """Look for a case on which ``check`` returns a failure: the cases ``first`` (where a
    known bug showed), then the whole ladder, whatever it costs (every scale up to ``max_n``
    is checked once, so no budget can hide a bug that needs many tiles), then Hypothesis
    until ``budget`` is spent.  A ``bounded`` budget
    stops the ladder instead at the first rung that its measured rate says would end past
    the seconds (one of n <= :data:`ALWAYS_RUN` only once they are spent; the first always
    runs), and the result's ``short_of`` names that rung.  Once a failure is found,
    shrinking may spend up to another ``budget.seconds``.  With ``key`` and an example
    database (:mod:`scancheck.core.database`), failures found before under that key, here or on
    another runner, are replayed before anything new is drawn.  ``uncharged`` (a running
    count of seconds: the target's first call of each kind, its compile) stops the budget's
    clock while it grows."""

    def clock() -> float:
        return time.monotonic() - (uncharged() if uncharged is not None else 0.0)

    wall0 = time.monotonic()
    deadline = clock() + budget.seconds
    ran = {"cases": 0, "largest": -1}
    timings: list[tuple[int, float]] = []  # (n, seconds) of each rung: what a scale costs
    found: list[tuple[Case, F]] = []
    # (dtype, distribution) -> (n, seconds) of the largest case of that kind so far: the cost
    # of an oracle grows with n and with the data's exponent span, and differs 100-fold by kind.
    cost: dict[tuple[str, str], tuple[int, float]] = {}

    def fit(case: Case) -> Case:
        """The case, at most as large as the time left allows at its kind's measured rate."""
        n0, s0 = cost.get((case.dtype, case.distribution), (0, 0.0))
        left = deadline - clock()
        # A case no larger than one already measured is cut too: half a second of it is
        # still half a second past the deadline when a tenth of one is left.
        if s0 * case.n <= left * n0:
            return case
        return case.with_n(max(1, min(case.n, int(n0 * left / s0))))

    def run(case: Case, cut: bool = True) -> tuple[Case, F | None]:
        if cut:
            case = fit(case)
        if on_case is not None:
            on_case(case)
        start = time.monotonic()
        failure = check(case)
        key = (case.dtype, case.distribution)
        took = time.monotonic() - start
        if case.n >= cost.get(key, (0, 0.0))[0]:
            cost[key] = (case.n, took)
        timings.append((case.n, took))
        ran["cases"] += 1
        ran["largest"] = max(ran["largest"], case.n)
        return case, failure

    def result(spent: bool, short_of: int | None = None) -> SearchResult[F]:
        case, failure = found[-1] if found else (None, None)
        return SearchResult(case, failure, ran["cases"], ran["largest"],
                            time.monotonic() - wall0, spent, short_of, [c for c, _ in found])

    for case in first:
        case, failure = run(case, cut=False)
        if failure is not None:
            found.append((case, failure))
            return result(False)

    for rung in ladder(dtypes, distributions, max_n, empty):
        # The smallest rungs are not stopped on a prediction, only once time is out.
        if budget.bounded and timings and (_past(timings, rung.n, deadline - clock()) if rung.n >
                                           ALWAYS_RUN else clock() > deadline):
            return result(True, rung.n)
        case, failure = run(rung, cut=False)
        if failure is not None:
            found.append((case, failure))
            return result(False)

    db = example_database() if key is not None else None
    # The failing cases themselves, as found: a companion is no example Hypothesis could
    # replay, and the scales it draws from depend on this run's timings.
    swept = (*distributions, *(SWEPT[d] for d in distributions if d in SWEPT))
    for case in _stored(db, key, dtypes, swept, max_n):
        case, failure = run(case, cut=False)
        if failure is not None:
            found.append((case, failure))
            return result(False)

    # The time, not the count of examples, shared evenly among the scales: each drawn about
    # as often as an example there is cheaper than one at the top, and a case cheaper than
    # Hypothesis's own work on an example run with companions.
    share = share_time(timings, max_n)
    if clock() > deadline:
        # What find would do, without its few milliseconds of setting up: stop at the
        # first example (the tests' budgets end this way hundreds of times a session).
        return result(True)

    # The sweep draws the data made for it in place of those they stand for: Hypothesis's
    # draws and their companions cover the others at every scale.
    sweep = Sweep(int(np.random.default_rng().integers(0, 2**32)), max_n, dtypes,
                  tuple(dict.fromkeys(SWEPT.get(d, d) for d in distributions)))
    for n, took in timings:  # what a case of each scale costs, from the ladder's rungs
        sweep.took(n, took)
    # Hypothesis's own seconds (drawing, bookkeeping) count among the draws'.
    seconds = {"drawn": 0.0, "swept": 0.0, "since": time.monotonic()}

    def fails(example: Case) -> bool:
        nonlocal deadline
        # While Hypothesis shrinks a failing example, the example alone is its test.
        extra = 0 if found else share.companions[min(max(example.n, 1).bit_length() - 1,
                                                     len(share.companions) - 1)]
        for k, case in enumerate((example, *companions(example, extra, dtypes, distributions,
                                                       max_n))):
            if clock() > deadline:
                raise _Spent
            case, failure = run(case)
            if failure is not None:
                if not found:
                    deadline = clock() + budget.seconds
                    if db is not None:
                        db.save(key + _CASES, json.dumps(asdict(case)).encode())
                found.append((case, failure))
                if k:  # a companion: the example drawn has nothing of it to shrink
                    raise _Found
                return True
        if found:
            return False
        seconds["drawn"] += time.monotonic() - seconds["since"]
        while seconds["swept"] < SWEEP_SHARE * seconds["drawn"]:
            if clock() > deadline:
                raise _Spent
            start = time.monotonic()
            case, failure = run(sweep.case())
            took = time.monotonic() - start
            sweep.took(case.n, took)
            seconds["swept"] += took
            if failure is not None:
                deadline = clock() + budget.seconds
                if db is not None:
                    db.save(key + _CASES, json.dumps(asdict(case)).encode())
                found.append((case, failure))
                raise _Found
        seconds["since"] = time.monotonic()
        return False

    spent = False
    try:
        with with_reporter(lambda _: None), private_storage():
            find(cases(dtypes, distributions, max_n, share.scales), fails, settings=settings(
                max_examples=budget.max_examples, database=db, deadline=None,
                suppress_health_check=list(HealthCheck)), database_key=key if db else None)
    except NoSuchExample:
        pass
    except _Spent:
        spent = not found
    except _Found:
        pass
    except Exception:
        # A target that fails only sometimes (a race) makes Hypothesis's replay raise: the
        # failure it saw is still the one to report.
        if not found:
            raise
    return result(spent)



#: Rungs of the ladder at most this large run until a bounded budget is spent, whatever the
#: rate predicts (a first call that imports or compiles is no rate).
ALWAYS_RUN = 16



def _past(timings: list[tuple[int, float]], n: int, left: float) -> bool:
    """Whether a case of ``n`` elements would take more than the ``left`` seconds: a call's
    cost (the median of the small cases) plus ``n`` times the least per-element rate of the
    last three cases run (a first call that imports or compiles is one outlier, not the
    rate)."""
    if left <= 0:
        return True
    if not timings:
        return False
    small = sorted(t for m, t in timings if m <= 64) or [0.0]
    a = small[len(small) // 2]
    rate = min(max(t - a, 0.0) / max(m, 1) for m, t in timings[-3:])
    return a + rate * n > left



#: Appended to a search's key: where the failing cases it found are stored, each whole.
_CASES = b"\0cases"



def _stored(db: Any, key: bytes | None, dtypes: tuple[str, ...],
            distributions: tuple[str, ...], max_n: int) -> list[Case]:
    """The failing cases stored under ``key`` that this search could draw (its dtypes,
    distributions and sizes); an entry that is not a case is passed over."""
    if db is None or key is None:
        return []
    out = []
    for value in db.fetch(key + _CASES):
        try:
            case = Case(**json.loads(value))
        except (ValueError, TypeError):
            continue
        if (isinstance(case.n, int) and 1 <= case.n <= max_n and case.dtype in dtypes
                and case.distribution in distributions and isinstance(case.seed, int)):
            out.append(case)
    return out



@dataclass(frozen=True)
class Shrunk:
    """The smallest failing case a shrink found, and whether it is the smallest: every
    smaller n checked on its data (its dtype, distribution and seed), none failing."""

    case: Case
    minimal: bool



def shrink(fails: Callable[[Case], bool], failed: list[Case], seconds: float,
           walk: int = 300, bands: bool = True, tails: bool = False,
           plain: str | None = None) -> Shrunk:
    """The smallest n known to fail, from every case a search saw fail (``failed``; the
    smallest n of them first, not run again): taken down by :func:`smallest_failing`, then
    (where ``bands``) along the sizes of the same residue modulo each block 2**j (n - t *
    2**j, bisected on t; with ``tails``, a 1-D input, also the case's own input without its
    first t * 2**j elements, j from 0; where those pass, drawn there from another seed, and
    then of the ``plain`` distribution), again
    until none of them fails, and every n from ``walk`` up to it
    checked, smallest first, while ``seconds`` last -- the first that fails is the
    smallest, and where the walk reaches it, it is (:attr:`Shrunk.minimal`).  Without
    ``bands`` (a size where the target stops answering: its threshold is what is told) the
    n found is taken as the smallest.  The last
    call of ``fails`` that held was at the n returned, unless none held (then that n is a
    case of ``failed``, not run again)."""
    deadline = time.monotonic() + seconds
    held: list[int] = []

    def failing(c: Case) -> bool:
        if fails(c):
            held[:] = [c.n]
            return True
        return False

    best = smallest_failing(failing, min(failed, key=lambda c: c.n), walk)
    if best.n <= walk or not bands:
        return Shrunk(best, True)
    # Down m elements: drawn at n - m (the first values of the same draw), or (``tails``)
    # this input less its first m; where neither fails, drawn at n - m from another seed:
    # the smaller sizes of one draw share its values, and a failure only some data show (an
    # overflow in the last tile, say) may show on none of them.  Last, the plain data: a
    # logic error first met on data that show it one draw in three (overflowing sums whose
    # bound is infinite) shows on them at every size it strikes, whatever the seed.
    downs = (lambda c, m: c.with_n(c.n - m), *((Case.dropped,) if tails else ()),
             lambda c, m: c.anew(c.n - m),
             lambda c, m: c.anew(c.n - m, plain) if plain not in (None, c.distribution)
             else None)
    # One element at a time only as this input less its first ones: a case drawn anew one
    # smaller moves a special out of the tile, where the input itself keeps it.
    singly = (Case.dropped,)
    went_down = True
    while went_down:
        went_down = False
        for j in range(0 if tails else 1, DESCENT_LOG2 + 1):
            step = 1 << j
            if best.n - step <= walk:
                continue
            down = next((d for d in (singly if j == 0 else downs)
                         if (smaller := d(best, step)) is not None and failing(smaller)), None)
            if down is None:
                continue
            # Fails one step down: bisect for the last step that fails, as for a bug that
            # holds past some size (to the walk: it checks below).
            good, bad = 1, (best.n - walk - 1) // step + 1
            while bad - good > 1:
                mid = (good + bad) // 2
                good, bad = (mid, bad) if failing(down(best, mid * step)) else (good, mid)
            best = down(best, good * step)
            went_down = True
    minimal = True
    for n in range(walk, best.n):
        if time.monotonic() > deadline:
            minimal = False
            break
        if failing(best.with_n(n)):
            return Shrunk(best.with_n(n), True)
    if held and held[0] != best.n:
        failing(best)  # the failure told is the one at best.n
    return Shrunk(best, minimal)



def smallest_failing(fails: Callable[[Case], bool], case: Case, walk: int = 300) -> Case:
    """The smallest n at which ``fails`` holds, with the case's dtype, distribution and seed.

    n walks up from 1 for ``walk`` steps (Hypothesis may stop at a tile edge, say 127, when
    65 fails too).  Past the walk it tries each tile edge 2**k + 1, and 2**k below the
    first that fails, smallest first, and bisects only between the last edge that passed and
    the first n that failed: it ends at an n that fails where n - 1 passes, the threshold of
    any bug that strikes past some size, having run no case much larger than that threshold
    (a bug one past a tile costs two cases there, not a bisection from ``case.n`` down).
    The n it returns is ``case.n`` (not run again) or the last at which ``fails`` held.
    """
    top = case.n
    for n in range(1, min(top, walk)):
        if fails(case.with_n(n)):
            return case.with_n(n)
    lo, hi = min(top, walk) - 1, top
    k = max(lo, 1).bit_length()
    while (1 << k) + 1 < hi:
        edge = (1 << k) + 1
        if fails(case.with_n(edge)):
            hi = edge
            if fails(case.with_n(edge - 1)):
                hi = edge - 1
            else:
                return case.with_n(edge)
            break
        lo, k = edge, k + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(case.with_n(mid)):
            hi = mid
        else:
            lo = mid
    return case.with_n(hi)
