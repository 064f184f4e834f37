"""Monoid laws of any binary operator, searched for counterexamples with Hypothesis.

A parallel scan is only correct for an operator that is associative and has an
identity; it may reorder operands only where the operator is commutative.
:func:`check_laws` searches for the smallest counterexample to each law, exactly
(on ``fractions.Fraction`` values) or in the element type, and for floats reports the
largest associativity defect in ulps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, find, given, settings, target
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample
from hypothesis.reporting import with_reporter

from ..core.database import private_storage
from ..core.operators import Operator


@dataclass
class LawReport:
    """Which monoid laws hold for an operator, each with its smallest counterexample."""

    name: str
    associative: bool
    associativity_counterexample: tuple | None
    identity: bool | None
    identity_counterexample: Any | None
    commutative: bool
    commutativity_counterexample: tuple | None
    #: Largest |(a.b).c - a.(b.c)| found, in ulps of the larger result (floats only).
    max_associativity_defect_ulps: float | None = None

    def summary(self) -> str:
        def law(ok: bool | None, cex: Any) -> str:
            if ok is None:
                return "not checked"
            return "holds" if ok else f"fails at {cex!r}"

        lines = [
            f"{self.name}: associativity {law(self.associative, self.associativity_counterexample)}",
            f"  identity {law(self.identity, self.identity_counterexample)}",
            f"  commutativity {law(self.commutative, self.commutativity_counterexample)}",
        ]
        if self.max_associativity_defect_ulps is not None:
            lines.append(f"  largest associativity defect: {self.max_associativity_defect_ulps:g} ulps")
        return "\n".join(lines)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float | np.floating) and np.isnan(a):
        return bool(np.isnan(b))
    return bool(a == b)


def _ulps_apart(a: Any, b: Any) -> float:
    """Distance in ulps of the larger magnitude, componentwise maximum for tuples."""
    if isinstance(a, tuple | list):
        return max(_ulps_apart(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    if not (np.isfinite(a) and np.isfinite(b)):
        return 0.0 if _equal(a.item(), b.item()) else float("inf")
    big = np.maximum(np.abs(a), np.abs(b))
    spacing = float(np.spacing(big.astype(a.dtype)))
    return float(abs(a.astype(np.float64) - b.astype(np.float64)) / spacing) if spacing else 0.0


def _lift(v: Any, exact: bool) -> Any:
    """``v`` with its floats turned into exact rationals (componentwise), if ``exact``."""
    if not exact:
        return v
    if isinstance(v, tuple | list):
        return tuple(_lift(c, exact) for c in v)
    return Fraction(v) if isinstance(v, float | np.floating) else v


def _search(strategy: st.SearchStrategy, fails: Callable[[Any], bool], max_examples: int) -> Any:
    """The smallest example for which ``fails`` holds, or None if none was found."""
    try:
        with private_storage():  # nothing of Hypothesis's in the working directory
            return find(
                strategy,
                fails,
                settings=settings(
                    max_examples=max_examples,
                    database=None,
                    deadline=None,
                    suppress_health_check=list(HealthCheck),
                ),
            )
    except NoSuchExample:
        return None


def check_laws(
    combine: Callable[[Any, Any], Any] | Operator,
    elements: st.SearchStrategy,
    *,
    identity: Any = None,
    exact: bool = False,
    name: str | None = None,
    max_examples: int = 300,
) -> LawReport:
    """Search for the smallest counterexample to associativity, identity and commutativity.

    ``combine(x, y)`` is any binary operator on the values ``elements`` draws (an
    :class:`~scancheck.core.operators.Operator` uses its exact evaluation).  With
    ``exact=True`` the drawn floats are turned into ``Fraction`` values first, so the
    laws are checked over the reals; otherwise in the element type, where the
    largest associativity defect is also measured in ulps.
    """
    if isinstance(combine, Operator):
        name = name or combine.name
        op = combine
        combine = op.combine_exact
    if not callable(combine):
        raise TypeError(f"combine must be callable or an Operator, got {type(combine).__name__}")
    if not isinstance(elements, st.SearchStrategy):
        raise TypeError(f"elements must be a Hypothesis strategy, got {type(elements).__name__}")
    if max_examples < 1:
        raise ValueError(f"max_examples={max_examples} must be at least 1")
    name = name or getattr(combine, "__name__", "operator")

    def lift(v: Any) -> Any:
        return _lift(v, exact)

    def reassociation_differs(t: tuple) -> bool:
        a, b, c = (lift(v) for v in t)
        return not _equal(combine(combine(a, b), c), combine(a, combine(b, c)))

    def commutation_differs(t: tuple) -> bool:
        a, b = (lift(v) for v in t)
        return not _equal(combine(a, b), combine(b, a))

    e = None if identity is None else lift(identity)

    def not_neutral(v: Any) -> bool:
        lv = lift(v)
        return not (_equal(combine(e, lv), lv) and _equal(combine(lv, e), lv))

    triples, pairs = st.tuples(elements, elements, elements), st.tuples(elements, elements)
    laws = {"associativity": (triples, reassociation_differs),
            "commutativity": (pairs, commutation_differs)}
    if identity is not None:
        laws["identity"] = (elements, not_neutral)
    broken, defect = _screen(combine, triples, {k: f for k, (_, f) in laws.items()},
                             max_examples, measure=not exact)
    # Only a law the screen saw fail is searched on its own, for its smallest counterexample.
    cex = {k: _search(*laws[k], max_examples) if k in broken else None for k in laws}
    return LawReport(
        name=name,
        associative=cex["associativity"] is None,
        associativity_counterexample=cex["associativity"],
        identity=None if identity is None else cex["identity"] is None,
        identity_counterexample=cex.get("identity"),
        commutative=cex["commutativity"] is None,
        commutativity_counterexample=cex["commutativity"],
        max_associativity_defect_ulps=defect,
    )


class _AllBroken(Exception):
    """Every law the screen checks has failed: nothing more for it to find."""


def _screen(combine: Callable, triples: st.SearchStrategy, laws: dict[str, Callable[[Any], bool]],
            max_examples: int, measure: bool) -> tuple[set[str], float | None]:
    """The laws that fail (or raise) on some of ``max_examples`` drawn triples (a, b, c) --
    associativity on the triple, commutativity on (a, b) and (b, c), the identity on each
    element -- and, where ``measure``, the largest (a.b).c vs a.(b.c) distance in ulps, the
    search targeting it.  One search where each law had one of its own: each law meets as
    many draws as before (the identity three times as many), at a third of Hypothesis's
    work on them; a law that fails is then searched alone for its smallest counterexample."""
    broken: set[str] = set()
    worst = [0.0]

    def fails(law: str, arg: Any) -> bool:
        try:
            return bool(laws[law](arg))
        except Exception:  # its own search raises it again, as it always did
            return True

    @settings(
        max_examples=max_examples,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.target] if measure else [Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(triples)
    def probe(t: tuple) -> None:
        a, b, c = t
        for law, args in (("associativity", (t,)), ("commutativity", ((a, b), (b, c))),
                          ("identity", (a, b, c))):
            if law in laws and law not in broken and any(fails(law, v) for v in args):
                broken.add(law)
        if measure:
            with np.errstate(all="ignore"):
                d = _ulps_apart(combine(combine(a, b), c), combine(a, combine(b, c)))
            if np.isfinite(d):
                target(d)
                worst[0] = max(worst[0], d)
        elif broken == set(laws):
            raise _AllBroken

    with private_storage(), with_reporter(lambda _: None), contextlib.suppress(_AllBroken):
        probe()
    return broken, worst[0] if measure else None


def find_disagreement(
    combine: Callable[[Any, Any], Any],
    elements: st.SearchStrategy,
    reference: Callable[[list], Any],
    identity: Any,
    *,
    project: Callable[[Any], Any] = lambda v: v,
    exact: bool = True,
    max_len: int = 6,
    max_examples: int = 300,
) -> list | None:
    """The smallest sequence whose left fold under ``combine`` (from ``identity``) differs
    from ``reference(sequence)`` after ``project``, or None.

    The laws cannot tell an operator from its mirror image (``combine(b, a)`` is
    associative whenever ``combine`` is); this compares with what the scan must mean.
    """
    def lift(v: Any) -> Any:
        return _lift(v, exact)

    def differs(seq: list) -> bool:
        acc = lift(identity)
        for v in seq:
            acc = combine(acc, lift(v))
        return not _equal(project(acc), reference([lift(v) for v in seq]))

    return _search(st.lists(elements, min_size=1, max_size=max_len), differs, max_examples)


def recurrence_disagreement(combine: Callable[[Any, Any], Any], elements: st.SearchStrategy,
                            **kwargs: Any) -> list | None:
    """The smallest (a, b) sequence where ``combine`` does not compute y_n = a_n*y_{n-1} + b_n
    from y_{-1} = 0 (component b of the folded pair), or None."""
    def sequential(seq: list) -> Any:
        y = 0
        for a, b in seq:
            y = a * y + b
        return y

    return find_disagreement(combine, elements, sequential, (1, 0), project=lambda p: p[1],
                             **kwargs)
