"""Scans over tuples of arrays: a user's monoid (``operator laws``, ``monoid scan``) and
generic scans that take the combine (``probe monoids``).

A target whose spec declares a :class:`~scancheck.core.monoids.Monoid` is called as
``fn(elems)``; one with ``combine=True`` as ``fn(elems, combine)``, and is driven by the
probe monoids (:data:`~scancheck.core.monoids.PROBES`), exact in their own arithmetic
(integer leaves, and float ones that never round) and non-commutative, so that any
element skipped, duplicated or combined out of order shows; its outputs are judged by
:mod:`~scancheck.engine.properties.monoid_judgement`.  A user's monoid whose laws fail is
reported as the operator's fault, and no scan of it is judged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...core.arrays import to_numpy
from ...core.monoids import PROBES, Leaves, Monoid, MonoidError
from ...oracle.monoid_scan import broken_law
from ...targets.spec import TargetSpec, monoid_of
from ...targets.target import NotAnArray, Target, first_write, raised_by_target
from ..cases import Case
from ..diagnosis import Cause, Reason, is_resource_error
from ..layouts import LAYOUTS, laid_out, memory_of
from .axes import negative_axis_refused
from .base import Failure
from .monoid_judgement import judge

#: The distribution under which a combine-taking target is driven by its spec's own monoid.
DECLARED = "declared monoid"
#: Drawn triples on which a user's monoid's laws are checked before any scan of it is judged.
LAW_TRIPLES = 256


#: Largest n of a scan of a monoid with float leaves: its exact answer is taken in rationals
#: and its spread over association orders folded in Python, element by element.
FLOAT_MAX_N = 2**12


def monoid_cap(spec: TargetSpec) -> int | None:
    """The largest n of 'monoid scan' and 'probe monoids' for ``spec``: :data:`FLOAT_MAX_N`
    where its declared monoid has float leaves that may round, else none of their own (the
    budget's)."""
    monoid = monoid_of(spec)
    return FLOAT_MAX_N if monoid is not None and monoid.rounds else None


#: The least length of the longer case an explanation of a failure is checked on too: else
#: 2n + 1 for a failure at n, past the failing size as a contract's longer case is, so that
#: a target that follows the explanation only in a band of sizes is not explained by it.
LONGER = 40
#: The other dimensions of an N-D case, drawn with these weights: singletons among them,
#: where batched scans break.
OTHER_DIMS: dict[int, float] = {1: 0.3, 2: 0.3, 3: 0.4}
#: The seeds (modulo 12) whose N-D case has one other dimension empty: the scan of an empty
#: batch is an empty one (the ladder's seeds reach it at n = 3 and past 2**11).
EMPTY_BATCH_SEED = 11


def _shape_and_axis(target: Target, case: Case) -> tuple[tuple[int, ...], int]:
    """The shape of a case's elements and the axis handed to the target: 1-D, or n along the
    declared axis of a small N-D array (axis='arg': ranks 2 to 4, any axis, named by a
    negative number on odd seeds; the other dimensions of :data:`OTHER_DIMS`; all by the
    case's seed)."""
    axis = target.spec.axis
    if axis is None:
        return (case.n,), 0
    if axis == "arg":
        ndim = 2 + case.seed % 3
        axis = (case.seed // 3) % ndim
        # Odd seeds, which the ladder's first rungs have: a negative axis met only by seeds
        # past 12 was met by chance, where a short ladder stopped before them (JAX's reverse
        # scan, to n = 128, refusing one: found in one check of it, missed in the next).
        if case.seed % 2:
            axis -= ndim
    else:
        ndim = max(2, axis + 1 if axis >= 0 else -axis)
    rng = np.random.default_rng([case.seed, 0xD1])
    shape = [int(d) for d in rng.choice(list(OTHER_DIMS), ndim, p=list(OTHER_DIMS.values()))]
    if case.seed % 12 == EMPTY_BATCH_SEED and not target.no_empty_batches:
        others = [d for d in range(ndim) if d != axis % ndim]
        shape[others[case.seed // 12 % len(others)]] = 0
    shape[axis] = case.n
    return tuple(shape), axis


def _memories(elems: Leaves, case: Case) -> list[dict[str, Any]] | None:
    """Each N-D leaf's memory layout, drawn from the case's seed (:func:`memory_of`; the
    rows property's layouts); None for 1-D leaves, which are handed contiguous."""
    if elems[0].ndim < 2:
        return None
    rng = np.random.default_rng([case.seed, 0x1EAF])
    return [memory_of(rng, LAYOUTS[int(rng.integers(len(LAYOUTS)))], v.ndim) for v in elems]


def call_on_leaves(target: Target, elems: Leaves, *args: Any,
                   memory: list[dict[str, Any]] | None = None) -> Any:
    """The target's own code on copies of ``elems`` (and ``args``), each leaf in its memory
    layout of ``memory`` (:func:`~scancheck.engine.layouts.laid_out`; C order where None): an
    exception it raises is marked as its own, and a write into a copy is
    :class:`~scancheck.targets.target.InputWritten`."""
    copies = tuple(np.array(v, copy=True) for v in elems) if memory is None else tuple(
        laid_out(v, m) for v, m in zip(elems, memory))
    n = int(sum(v.size for v in elems))
    # A library compiles a scan per combine and axis (torch.compile): each is a kind.
    kind = (tuple(str(v.dtype) for v in elems), elems[0].ndim,
            *(repr(a) if callable(a) else a if isinstance(a, int) else type(a).__name__
              for a in args))
    with target.own_code(n, kind):
        out = target.fn(copies, *args)
    for v, c in zip(elems, copies):
        written = first_write(v, c)
        if written is not None:
            raise written
    return out


def _leaves_of(out: Any, monoid: Monoid, shape: tuple[int, ...]) -> Leaves | Failure:
    """The target's return as host leaves, or the failure of a return of the wrong form."""
    if hasattr(out, "shape") and len(monoid.dtypes) == 1:
        out = (out,)
    if not isinstance(out, tuple | list) or len(out) != len(monoid.dtypes):
        what = (f"{len(out)} arrays" if isinstance(out, tuple | list)
                else f"a {type(out).__name__}")
        return Failure(Cause.LOGIC, f"returned {what}; a scan of {monoid.name!r} returns a "
                       f"tuple of {len(monoid.dtypes)} arrays, one per leaf", reason=Reason.SHAPE)
    leaves = []
    for i, (v, d) in enumerate(zip(out, monoid.dtypes)):
        if not (hasattr(v, "shape") and hasattr(v, "dtype")):
            return Failure(Cause.LOGIC, f"returned a {type(v).__name__} as leaf {i}, not an array",
                           reason=Reason.SHAPE)
        v = to_numpy(v)
        if v.shape != shape or v.dtype.name != d:
            # Only what differs is named: a shape one short with the right dtype read as
            # a dtype error when both were printed.
            wrong = [f"shape {v.shape}" if v.shape != shape else "",
                     f"dtype {v.dtype}" if v.dtype.name != d else ""]
            due = f", whose leaf {i} is {d}" if v.dtype.name != d else ""
            return Failure(Cause.LOGIC, f"returned leaf {i} of {' and '.join(filter(None, wrong))}"
                           f" for {monoid.name!r} elements of shape {shape}{due}",
                           reason=Reason.SHAPE)
        leaves.append(v)
    return tuple(leaves)


def nonempty_batches(target: Target) -> Target:
    """``target`` to be handed no empty batch: what a property's search goes on with once
    its answer to one was wrong, so that the failure hides no other a larger case shows."""
    return replace(target, no_empty_batches=True)


def _batch(shape: tuple[int, ...], axis: int) -> list[int]:
    """The dimensions of ``shape`` other than ``axis``: the batch its rows make up."""
    return [d for i, d in enumerate(shape) if i != axis % len(shape)] if len(shape) > 1 else []


def _drawn(monoid: Monoid, target: Target, case: Case) -> tuple[Leaves, int]:
    shape, axis = _shape_and_axis(target, case)
    if target.front_axes:
        axis %= len(shape)
    return monoid.draw(np.random.default_rng(case.seed), shape), axis


def _run(target: Target, monoid: Monoid, case: Case, combine: bool) -> Failure | None:
    elems, axis = _drawn(monoid, target, case)
    args: tuple[Any, ...] = (monoid.bound,) if combine else ()
    if target.spec.axis == "arg":
        args += (axis,)
    memory = _memories(elems, case)
    refusal = None
    try:
        out = call_on_leaves(target, elems, *args, memory=memory)
    except Exception as exc:
        at = {"shape": list(elems[0].shape), "axis": axis, **({"memory": memory} if memory
                                                               else {})}
        refusal = None if target.spec.axis != "arg" else negative_axis_refused(
            lambda ax: call_on_leaves(target, elems, *args[:-1], ax, memory=memory), axis,
            elems[0].shape, exc, at)
        if refusal is None and 0 in _batch(elems[0].shape, axis) and raised_by_target(
                exc) and not (isinstance(exc, NotAnArray) or is_resource_error(exc)):
            # The same case with the batch holding elements: where it raises or is wrong too,
            # that is the failure (a size limit, say), not the empty batch.
            again = _run(nonempty_batches(target), monoid, case, combine)
            if again is not None:
                return again
            return Failure(Cause.LOGIC, f"raised {type(exc).__name__} on elements of shape "
                           f"{list(elems[0].shape)}, an empty batch ({str(exc)[:120]}); its "
                           f"scan is an empty batch too", at=at,
                           detail={"empty batch": list(elems[0].shape)},
                           reason=Reason.EMPTY_BATCH)
        if refusal is None:
            raise
        # The answer along the same axis counted from the front is judged all the same.
        out, axis = refusal.answer, refusal.front
        args = (*args[:-1], axis)
    got = _leaves_of(out, monoid, elems[0].shape)

    def rerun() -> tuple[Leaves, Leaves] | None:
        shape = list(elems[0].shape)
        longer = 2 * shape[axis] + 1
        if target.spec.max_n is not None:
            longer = max(min(longer, target.spec.max_n), shape[axis])
        shape[axis] = max(longer, LONGER)
        more = monoid.draw(np.random.default_rng([case.seed, 0xC0DE]), tuple(shape))
        try:
            ran = _leaves_of(call_on_leaves(target, more, *args, memory=memory), monoid,
                             tuple(shape))
        except Exception:  # whatever it raises there, the search meets on its own
            return None
        return None if isinstance(ran, Failure) else (more, ran)

    if not isinstance(got, Failure):
        got = judge(target, monoid, elems, got, axis % elems[0].ndim, rerun)
    if refusal is not None:
        got = refusal.told(got)
    if got is not None and 0 in _batch(elems[0].shape, axis):
        again = _run(nonempty_batches(target), monoid, case, combine)
        if again is not None:  # not the empty batch's doing (as above)
            return again
        if got.reason != Reason.EMPTY_BATCH:
            got.diagnosis += " (an empty batch: its scan is an empty batch of the same shape)"
        got.reason = Reason.EMPTY_BATCH
        got.detail["empty batch"] = list(elems[0].shape)
        got.at.setdefault("shape", list(elems[0].shape))
        got.at.setdefault("axis", axis)
    if got is not None and memory is not None:  # what the reproducer lays the leaves out by
        got.at["memory"] = memory
        if any(m["layout"] != "C" for m in memory):
            got.diagnosis += (f" (leaves of shape {list(elems[0].shape)}, in the memory layouts "
                              f"{', '.join(m['layout'] for m in memory)})")
    return got


def raised_in(exc: BaseException, fn: Any) -> bool:
    """Whether ``exc`` was raised while ``fn`` (a Python function) ran: the user's combine,
    not scancheck's own code around it."""
    code = getattr(fn, "__code__", None)
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            return True
        tb = tb.tb_next
    return False


def not_judged(monoid: Monoid) -> str | None:
    """Why no scan of ``monoid`` is judged: a law it breaks on the fixed draw every property
    shares, or a combine or element strategy that does not do what a monoid's must (None
    where its laws hold there; ``operator laws`` searches further)."""
    try:
        broken = broken_law(monoid, LAW_TRIPLES, 0)
    except MonoidError as exc:
        return f"not judged: {exc}"
    except Exception as exc:
        if not raised_in(exc, monoid.combine):
            raise
        return (f"not judged: its combine raised {type(exc).__name__} ({exc}) (see 'operator "
                f"laws')")
    if broken is None:
        return None
    return f"not judged: {broken.line(monoid.name)} (see 'operator laws')"


def laws_check(target: Target, case: Case) -> Failure | None:
    """``operator laws``: the declared monoid is associative, has its identity on both
    sides, and commutes where declared commutative, on ``case.n`` drawn triples."""
    monoid = monoid_of(target.spec)
    assert monoid is not None
    try:
        broken = broken_law(monoid, case.n, case.seed)
    except MonoidError as exc:
        return Failure(Cause.OPERATOR, str(exc), independent=True, reason=Reason.MONOID_LAW)
    except Exception as exc:
        if not raised_in(exc, monoid.combine):
            raise
        return Failure(Cause.OPERATOR, f"the combine of {monoid.name!r} raised "
                       f"{type(exc).__name__} ({exc}) on elements it declares",
                       independent=True, reason=Reason.MONOID_LAW)
    if broken is None:
        return None
    # The law's two sides are in its line: neither is an output owed, as got and expected
    # would read, and the case's n counts triples, not elements.
    return Failure(Cause.OPERATOR, broken.line(monoid.name), at={"triple": broken.index},
                   independent=True, reason=Reason.MONOID_LAW)


def monoid_check(target: Target, case: Case) -> Failure | None:
    """``monoid scan``: a target of a user's monoid equals its exact scan (applies only
    once the monoid's laws hold: :func:`not_judged`)."""
    monoid = monoid_of(target.spec)
    assert monoid is not None
    return _run(target, monoid, case, combine=False)


def probes_check(target: Target, case: Case) -> Failure | None:
    """``probe monoids``: a target that takes the combine equals the exact scan under the
    probe monoid the case names (its spec's own monoid under :data:`DECLARED`)."""
    if case.distribution == DECLARED:
        monoid = monoid_of(target.spec)
        if monoid is None or not_judged(monoid):
            return None  # no monoid declared, or none to judge: 'operator laws' says why
    else:
        monoid = PROBES[case.distribution]
    return _run(target, monoid, case, combine=True)
