"""What a conformance property runs on: cases, their sizes, and the time budget of a search.

A :class:`Case` is ``(n, dtype, distribution, seed)``: short enough to print, enough to
rebuild the input bit for bit.  Sizes spread log-uniformly over every scale from 1 to the
largest n, with the tile edges ``2**k - 1``, ``2**k`` and ``2**k + 1`` of every scale
(the edges of any power-of-two tile, block or level).  :func:`search` always walks a
ladder of one edge per scale, smallest first, up to the largest n, then lets Hypothesis draw
cases until the :class:`Budget` is spent; :func:`smallest_failing` takes a failure down to the smallest n
that still fails.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

import numpy as np
from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample
from hypothesis.reporting import with_reporter

from ..core.database import example_database, private_storage
from ..core.operators import get_operator
from .strategies import generate_data, generate_pairs

#: The largest n a search reaches by default: many tiles of any realistic kernel (a GPU
#: tile is at most a few thousand elements), within what the exact oracle checks in a
#: second or two.
DEFAULT_MAX_N = {"cpu": 2**20, "gpu": 2**24}

F = TypeVar("F")


@dataclass(frozen=True)
class Budget:
    """What one property's search may spend: wall-clock seconds, examples, and the largest
    n (None: ``DEFAULT_MAX_N`` of the target's device)."""

    seconds: float = 30.0
    #: Far past what any budget of seconds draws: the search ends on time, not on a count
    #: (at 1000 it ended after 5 s of 30 and missed a bug at n in [1000, 1010]).
    max_examples: int = 10**6
    max_n: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.seconds, bool) or not isinstance(self.seconds, int | float) or not (
                math.isfinite(self.seconds) and self.seconds > 0):
            raise ValueError(f"budget={self.seconds!r} seconds must be a positive number")
        for name in ("max_examples", "max_n"):
            value = getattr(self, name)
            if value is None and name == "max_n":
                continue
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise ValueError(f"{name}={value!r} must be a positive integer")

    def top(self, device: str, *caps: int | None) -> int:
        """The largest n to search for a target on ``device``, within every given cap."""
        return min([self.max_n or DEFAULT_MAX_N[device], *(c for c in caps if c is not None)])


@dataclass(frozen=True)
class Case:
    """One input of a property: ``n`` elements of ``dtype`` drawn from ``distribution``."""

    n: int
    dtype: str
    distribution: str
    seed: int

    def data(self, op: str) -> np.ndarray:
        """The input, bit for bit the same on every call (pairs for a pair operator)."""
        rng = np.random.default_rng(self.seed)
        if get_operator(op).width == 2:
            return generate_pairs(rng, self.n, self.dtype, distribution=self.distribution)
        return generate_data(rng, self.n, self.dtype, self.distribution)

    def with_n(self, n: int) -> Case:
        return replace(self, n=n)

    def describe(self) -> dict[str, Any]:
        return {"n": self.n, "dtype": self.dtype, "data": self.distribution, "seed": self.seed}


@st.composite
def scaled_sizes(draw: st.DrawFn, max_n: int) -> int:
    """n in [1, max_n]: a scale k with 2**k <= max_n first, then the tile edge 2**k - 1,
    2**k or 2**k + 1, or any n in [2**k, 2**(k+1)).  Shrinks toward small scales."""
    k = draw(st.integers(0, max_n.bit_length() - 1))
    where = draw(st.integers(0, 3))
    lo = 1 << k
    n = lo + draw(st.integers(0, lo - 1)) if where == 0 else lo + where - 2
    return min(max(n, 1), max_n)


def cases(dtypes: tuple[str, ...], distributions: tuple[str, ...], max_n: int
          ) -> st.SearchStrategy[Case]:
    """Cases of any declared dtype and distribution at :func:`scaled_sizes`."""
    return st.builds(Case, scaled_sizes(max_n), st.sampled_from(dtypes),
                     st.sampled_from(distributions), st.integers(0, 2**32 - 1))


def ladder(dtypes: tuple[str, ...], distributions: tuple[str, ...], max_n: int,
           empty: bool) -> list[Case]:
    """Every dtype-distribution pair once at a small size (after n = 0 where ``empty``), so
    that a bug only some data show is met at once; then one tile edge per scale up to
    ``max_n`` and ``max_n`` itself, cycling through the pairs as the scale grows."""
    out = [Case(0, dtypes[0], distributions[0], 0)] if empty else []
    pairs = [(dt, dist) for dist in distributions for dt in dtypes]
    out += [Case(min(max((1 << (i % 5)) + i % 3 - 1, 1), max_n), dt, dist, i)
            for i, (dt, dist) in enumerate(pairs)]
    nd = len(dtypes)
    for k in range(max_n.bit_length()):
        n = min(max((1 << k) + k % 3 - 1, 1), max_n)
        out.append(Case(n, dtypes[k % nd], distributions[(k // nd) % len(distributions)], k))
    if out[-1].n != max_n:
        out.append(Case(max_n, dtypes[0], distributions[0], max_n))
    return out


class _Spent(BaseException):
    """Raised inside Hypothesis's search when the budget is spent: a BaseException, so the
    engine stops at once instead of trying to shrink it as a failure."""


@dataclass
class SearchResult(Generic[F]):
    """What a search found: the failing case and its failure (or None), and what it spent."""

    failing: Case | None
    failure: F | None
    cases: int
    largest_n: int
    seconds: float
    budget_spent: bool


def search(check: Callable[[Case], F | None], dtypes: tuple[str, ...],
           distributions: tuple[str, ...], max_n: int, budget: Budget, empty: bool = True,
           on_case: Callable[[Case], None] | None = None, key: bytes | None = None
           ) -> SearchResult[F]:
    """Look for a case on which ``check`` returns a failure: the whole ladder first, whatever
    it costs (every scale up to ``max_n`` is checked once, so no budget can hide a bug that
    needs many tiles), then Hypothesis until ``budget`` is spent.  Once a failure is found,
    shrinking may spend up to another ``budget.seconds``.  With ``key`` and an example
    database (:mod:`scancheck.core.database`), failures found before under that key, here or on
    another runner, are replayed before anything new is drawn."""
    t0 = time.monotonic()
    deadline = t0 + budget.seconds
    ran = {"cases": 0, "largest": -1}
    found: list[tuple[Case, F]] = []
    # (dtype, distribution) -> (n, seconds) of the largest case of that kind so far: the cost
    # of an oracle grows with n and with the data's exponent span, and differs 100-fold by kind.
    cost: dict[tuple[str, str], tuple[int, float]] = {}

    def fit(case: Case) -> Case:
        """The case, at most as large as the time left allows at its kind's measured rate."""
        n0, s0 = cost.get((case.dtype, case.distribution), (0, 0.0))
        left = deadline - time.monotonic()
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
        if case.n >= cost.get(key, (0, 0.0))[0]:
            cost[key] = (case.n, time.monotonic() - start)
        ran["cases"] += 1
        ran["largest"] = max(ran["largest"], case.n)
        return case, failure

    def result(spent: bool) -> SearchResult[F]:
        case, failure = found[-1] if found else (None, None)
        return SearchResult(case, failure, ran["cases"], ran["largest"],
                            time.monotonic() - t0, spent)

    for rung in ladder(dtypes, distributions, max_n, empty):
        case, failure = run(rung, cut=False)
        if failure is not None:
            found.append((case, failure))
            return result(False)

    def fails(case: Case) -> bool:
        nonlocal deadline
        if time.monotonic() > deadline:
            raise _Spent
        case, failure = run(case)
        if failure is not None:
            if not found:
                deadline = time.monotonic() + budget.seconds
            found.append((case, failure))
        return failure is not None

    spent = False
    db = example_database() if key is not None else None
    try:
        with with_reporter(lambda _: None), private_storage():
            find(cases(dtypes, distributions, max_n), fails, settings=settings(
                max_examples=budget.max_examples, database=db, deadline=None,
                suppress_health_check=list(HealthCheck)), database_key=key if db else None)
    except NoSuchExample:
        pass
    except _Spent:
        spent = not found
    except Exception:
        # A target that fails only sometimes (a race) makes Hypothesis's replay raise: the
        # failure it saw is still the one to report.
        if not found:
            raise
    return result(spent)


def smallest_failing(fails: Callable[[Case], bool], case: Case, walk: int = 300) -> Case:
    """The smallest n at which ``fails`` holds, with the case's dtype, distribution and seed.

    n walks up from 1 for ``walk`` steps (Hypothesis may stop at a tile edge, say 127, when
    65 fails too).  Past the walk it tries each tile edge 2**k + 1, and 2**k below the
    first that fails, smallest first, and bisects only between the last edge that passed and
    the first n that failed: it ends at an n that fails where n - 1 passes, the threshold of
    any bug that strikes past some size, having run no case much larger than that threshold
    (a bug one past a tile costs two cases there, not a bisection from ``case.n`` down).
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
