"""What a property is (its row: check, dtypes, data, operators) and what a failing
case returns (:class:`Failure`: cause, diagnosis, the first wrong output)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ...targets.target import Target
from ..cases import Case
from ..diagnosis import Cause, Reason


@dataclass(frozen=True)
class Contract:
    """A documented behaviour other than the spec's, which a flag declares: what the target
    does, in words, the flag, and the :class:`~scancheck.targets.spec.TargetSpec` fields the
    flag sets.  A failure that carries one is a contract difference only where the target
    is right once it is declared, on its own case and on a longer one
    (:func:`scancheck.engine.conformance.check_property` checks both)."""

    behaviour: str
    flag: str
    fields: tuple[tuple[str, Any], ...]


@dataclass
class Failure:
    """Why one case failed: its cause, what it shows (its :class:`Reason`, which every
    decision about it reads), one line of diagnosis for a person, and where."""

    cause: Cause
    diagnosis: str
    index: int | None = None
    got: Any = None
    expected: Any = None
    detail: dict[str, Any] = field(default_factory=dict)
    #: The case's own evidence shows this failure does not follow from a logic error
    #: (the input without its NaNs is right; every run is within the bound).
    independent: bool = False
    #: Where in a batched input: the row, the shape, the axis, the layout.
    at: dict[str, Any] = field(default_factory=dict)
    #: The contract a failure of cause CONTRACT names (None for every other failure).
    contract: Contract | None = None
    #: The absolute error the property allows at ``index``, where it judges by a bound (a
    #: reproducer then tells a mended output from one still wrong with another value).
    allowed: float | None = None
    #: Whether a rerun of the same input that comes out right refutes it (a contract read
    #: off a call under another declaration is not refuted so: the outputs the declared
    #: call leaves unwritten may come out right where a right answer left its memory).
    rerun_refutes: bool = True
    #: What the failure shows: the criterion broken, or why no answer came.
    reason: Reason = field(kw_only=True)

    def told_alike(self, other: Failure | None) -> bool:
        """Whether ``other`` is this failure told again (on a smaller or plainer case): the
        same cause, reason and contract."""
        return other is not None and (other.cause, other.reason, other.contract) == (
            self.cause, self.reason, self.contract)

    def where(self) -> dict[str, Any]:
        if self.index is None:
            return dict(self.at)
        # A refusal read off an output (a checked overflow raised) has no values there, and
        # a wrap where a raise is declared no value it owed.
        # Runs of one input held to each other: no value there is expected, each is a run's.
        named = ((("run 1", self.expected), ("run 2", self.got))
                 if self.cause == Cause.NONDETERMINISM else
                 (("got", self.got), ("expected", self.expected)))
        values = {k: short(v) for k, v in named if v is not None}
        return {**self.at, "index": self.index, **values,
                **({} if self.allowed is None else {"allowed error": self.allowed})}


@dataclass
class Untold(Failure):
    """A failure as first found (the first wrong output), its attribution still to be made:
    :meth:`told` makes it, from the arrays the case was judged on, and returns what the
    check would have returned.  A search and its shrinking need only know that a case
    fails, and discard all its failures but one: only the one reported is told."""

    attribute: Callable[[], Failure] | None = field(default=None, repr=False, compare=False)

    def told(self) -> Failure:
        assert self.attribute is not None
        return self.attribute()


def untold(failure: Failure, attribute: Callable[[], Failure]) -> Untold:
    """``failure`` with ``attribute`` (which returns it attributed) left to call."""
    return Untold(**{f.name: getattr(failure, f.name) for f in fields(Failure)},
                  attribute=attribute)


#: A property's check of one case: None where it passes, else its failure, which may be
#: :class:`Untold` (:func:`~scancheck.engine.conformance.check_property` tells the one it
#: reports).
Check = Callable[[Target, Case], "Failure | None"]


@dataclass(frozen=True)
class Property:
    """One conformance property: its check, and the dtypes, data and operators it covers."""

    name: str
    check: Check
    dtypes: tuple[str, ...]
    distributions: tuple[str, ...]
    ops: tuple[str, ...]
    #: Its own largest n (the recurrence's rational oracle grows with n).
    max_n: int | None = None
    #: Its largest n for a given spec, where that depends on it (None: no cap of its own).
    cap: Callable[[Any], int | None] | None = None
    #: Whether it checks N-D inputs (targets whose spec has an axis only).
    batched: bool = False
    #: Distributions of its own for some operators: (operator, distributions) pairs.
    by_op: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def data_for(self, op: str) -> tuple[str, ...]:
        """The distributions its cases draw for a target of operator ``op``."""
        return dict(self.by_op).get(op, self.distributions)


def prefix_error(bits: int) -> str:
    """A relative error of 2**-bits of a prefix's magnitude, in words (bits <= 0: as large
    as that magnitude or more, not 2**-0 or 2**--1)."""
    return (f"relative error 2**-{bits} of the prefix's magnitude" if bits > 0 else
            "an error as large as the prefix's magnitude or more")


def short(v: Any) -> Any:
    """``v`` as a Python number or nested list, as a report shows it: each element of a list
    or tuple as itself (a tuple of a monoid's leaves may hold int64 and uint64 values past
    int64, which one array would hold only as floats)."""
    if isinstance(v, list | tuple):
        return [short(e) for e in v]
    v = np.asarray(v)
    return v.item() if v.ndim == 0 else v.tolist()


#: For output k of row r of a batch: what it shows, in words, what came back and what was due.
Told = Callable[[int, int], tuple[Reason, str, Any, Any]]
