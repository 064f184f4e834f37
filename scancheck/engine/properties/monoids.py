"""Scans over tuples of arrays: a user's monoid (``operator laws``, ``monoid scan``) and
generic scans that take the combine (``probe monoids``).

A target whose spec declares a :class:`~scancheck.core.monoids.Monoid` is called as
``fn(elems)``; one with ``combine=True`` as ``fn(elems, combine)``, and is driven by the
probe monoids (:data:`~scancheck.core.monoids.PROBES`), exact in their own arithmetic
(integer leaves, and float ones that never round) and non-commutative, so that any
element skipped, duplicated or combined out of order shows.  The answer is
:func:`~scancheck.oracle.monoid_scan.exact_monoid_scan` in the declared convention
(forward, ``reverse='flip'`` or ``'suffix'``); a failure names the first wrong output, and
what the target did where that can be told: the other reverse convention, the operands of
every combine swapped, two partial results combined later-first, or a leaf that does not
start from its identity.  A user's monoid whose laws fail is reported as the
operator's fault, and no scan of it is judged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ...core.arrays import to_numpy
from ...core.dtypes import finfo, is_float
from ...core.monoids import PROBES, Leaves, Monoid, MonoidError
from ...oracle.monoid_scan import (
    REVERSE_CONVENTIONS,
    SEQUENTIAL_MAX,
    broken_law,
    exact_monoid_scan,
    exact_reference,
    float_spread,
    monoid_scan,
    rounding_bound,
    wrong_order_split,
)
from ...targets.spec import TargetSpec, monoid_of
from ...targets.target import NotAnArray, Target, first_write, raised_by_target
from ..cases import Case
from ..diagnosis import Cause, Reason, is_resource_error
from ..layouts import LAYOUTS, laid_out, memory_of
from .axes import negative_axis_refused
from .base import Failure

#: The distribution under which a combine-taking target is driven by its spec's own monoid.
DECLARED = "declared monoid"
#: How far past the spread of the association orders tried a float output may lie: other
#: orders (a target's tiles) round differently again.
SPREAD_FACTOR = 4
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


def convention(target: Target) -> str | None:
    """The spec's reverse convention: None forward; True (a commutative operator) as 'flip'."""
    r = target.spec.reverse
    return None if not r else ("flip" if r is True else r)


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
    with target.own_code(n):
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


def _same(monoid: Monoid, a: Leaves, b: Leaves) -> np.ndarray:
    """Per element: every leaf equal (floats by value, NaN equal to NaN)."""
    ok = np.ones(np.shape(a[0]), dtype=bool)
    for u, v, d in zip(a, b, monoid.dtypes):
        eq = u == v
        if is_float(d):
            eq |= np.isnan(u) & np.isnan(v)
        ok &= eq
    return ok


def _swapped(monoid: Monoid) -> Monoid:
    return Monoid(lambda a, b: monoid.combine(b, a), monoid.identity, name=monoid.name,
                  exact=monoid.exact)


#: A run of the target on other elements, drawn longer: (elements, its leaves), or None
#: where it returned no leaves; what an explanation told from a short case is checked on.
Rerun = Callable[[], "tuple[Leaves, Leaves] | None"]


def judge(target: Target, monoid: Monoid, elems: Leaves, got: Leaves, axis: int,
          rerun: Rerun | None = None) -> Failure | None:
    """``got`` against the scan of ``elems`` by ``monoid`` in the target's declared
    convention: exact where the oracle is, else within the spread of association orders;
    what the target did told where it fits every output, and ``rerun``'s too."""
    spec = target.spec
    conv = convention(target)
    if monoid.rounds:  # every order rounds differently: within their spread of the answer
        return _judge_spread(target, monoid, elems, got, axis)
    want = exact_monoid_scan(monoid, elems, spec.inclusive, conv, axis)
    ok = _same(monoid, got, want)
    if ok.all():
        return None
    moved = np.moveaxis(ok, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    row = int(np.argmax(~rows.all(axis=1)))
    bad = np.flatnonzero(~rows[row])
    k = int(bad[-1] if conv else bad[0])  # the first wrong output in scan order
    g = _pick(got, axis, row, k)
    w = _pick(want, axis, row, k)
    n = elems[0].shape[axis]
    if n > SEQUENTIAL_MAX:  # the answer was taken in log-depth order: the fold's, to be sure
        seq = monoid_scan(monoid, _row(elems, axis, row), spec.inclusive, conv, sequential=True)
        s = tuple(v[k].item() for v in seq)
        if s != w:
            return Failure(Cause.OPERATOR, f"{monoid.name}: output {k} of the sequential fold "
                           f"is {s}, of a log-depth association order {w}: the combine is not "
                           f"associative on these elements (a law 'operator laws' did not meet "
                           f"on its draws)", k, list(s), list(w), independent=True,
                           reason=Reason.MONOID_LAW)
    text = (f"{monoid.name}: output {k} is {g}, the {'inclusive' if spec.inclusive else 'exclusive'}"
            f" {'forward' if not conv else repr(conv)} scan gives {w}")
    why = _told(target, monoid, elems, got, want, axis, row, k, g, rerun)
    at = {} if len(elems[0].shape) == 1 else {
        "row": row, "shape": list(elems[0].shape), "axis": axis}
    detail = {"monoid": monoid.name, "n": n}
    return Failure(Cause.LOGIC, text + (f": {why}" if why else ""), k, list(g), list(w),
                   detail=detail, at=at, reason=Reason.WRONG_VALUE)


def _pick(leaves: Leaves, axis: int, row: int, k: int) -> tuple:
    out = []
    for v in leaves:
        m = np.moveaxis(np.asarray(v), axis, -1)
        out.append(m.reshape(-1, m.shape[-1])[row, k].item())
    return tuple(out)


def _row(leaves: Leaves, axis: int, row: int) -> Leaves:
    out = []
    for v in leaves:
        m = np.moveaxis(np.asarray(v), axis, -1)
        out.append(m.reshape(-1, m.shape[-1])[row])
    return tuple(out)


def _told(target: Target, monoid: Monoid, elems: Leaves, got: Leaves, due: Leaves, axis: int,
          row: int, k: int, g: tuple, rerun: Rerun | None = None) -> str:
    """What the target did (``due`` the scan it owes), where one of the usual mistakes
    explains every output (and every output of ``rerun``'s longer case: a short case fits a
    wrong story by chance), or the wrong output alone; '' where none does."""
    spec = target.spec
    conv = convention(target)
    longer: list[tuple[Leaves, Leaves] | None] = []

    def fits(m: Monoid, c: str | None) -> bool:
        if not _same(monoid, got, monoid_scan(m, elems, spec.inclusive, c, axis)).all():
            return False
        if rerun is None:
            return True
        if not longer:
            longer.append(rerun())
        if longer[0] is None:
            return False
        more, out = longer[0]
        return bool(_same(monoid, out, monoid_scan(m, more, spec.inclusive, c, axis)).all())

    if conv is not None:
        other = "suffix" if conv == "flip" else "flip"
        if fits(monoid, other):
            return (f"the target follows reverse={other!r} ({REVERSE_CONVENTIONS[other]}), "
                    f"not the declared reverse={conv!r}")
    for other in ([None] if conv else ["flip", "suffix"]):
        if fits(monoid, other):
            return (f"the target scans {'forward' if other is None else 'in reverse'} "
                    f"({'out[k] combines x[:k+1]' if other is None else REVERSE_CONVENTIONS[other]})"
                    f", not {'forward' if conv is None else f'in reverse ({conv!r})'} as declared")
    if not monoid.commutative and fits(_swapped(monoid), conv):
        return ("every output is the scan with combine's operands swapped, combine(b, a) "
                "where combine(a, b) is due, a the earlier elements (operand order)")
    wrong = [i for i, (u, v) in enumerate(zip(got, due)) if not np.array_equal(u, v)]
    ident = tuple(v.item() for v in monoid.identity)
    x = _row(elems, axis, row)
    n = x[0].shape[0]
    first_out = (n - 1) if conv else 0
    if not spec.inclusive and k == first_out:
        leaves = [i for i in wrong if g[i] != ident[i]]
        return (f"output {k} of an exclusive scan is the identity {ident}; leaf "
                f"{', '.join(map(str, leaves))} is not: the identity's role dropped on "
                f"{'that leaf' if len(leaves) == 1 else 'those leaves'}")
    kk = (n - 1 - k if conv == "flip" else k) - (not spec.inclusive)
    if not monoid.commutative and conv != "suffix" and kk >= 1:
        xs = tuple(v[::-1] for v in x) if conv == "flip" else x
        j = wrong_order_split(monoid, xs, kk, g)
        if j is not None:
            lo, hi = (f"x[0:{j}]", f"x[{j}:{kk + 1}]") if conv is None else (
                f"x[{n - j}:{n}]", f"x[{n - 1 - kk}:{n - j}]")
            return (f"it is combine({hi}, {lo}): the partial results of {lo} and {hi} were "
                    f"combined later-first (operand order)")
    if len(wrong) == 1 and len(monoid.dtypes) > 1:
        i = wrong[0]
        w = _pick(due, axis, row, k)[i]
        if is_float(monoid.dtypes[i]) and float(g[i]).is_integer() and not float(w).is_integer():
            return (f"only leaf {i} is wrong, {g[i]} where {w} is due: its fraction lost (a "
                    f"float leaf carried in an integer type?)")
        if monoid.dtypes[i] == "float64" and abs(g[i] - w) <= 2**-20 * abs(w):
            return (f"only leaf {i} is wrong, {g[i]!r} where {w!r} is due: within float32's "
                    f"precision of it (a float64 leaf carried in float32?)")
        return f"only leaf {i} is wrong (its identity is {ident[i]})"
    return ""


def _outside(monoid: Monoid, x: Leaves, g: Leaves, inclusive: bool, conv: str | None
             ) -> tuple[int, np.ndarray, Any, bool] | None:
    """The first leaf of the 1-D row ``g`` with outputs outside the allowance around the
    answer for ``x`` (:func:`_judge_spread`): (leaf, its bad outputs, the spread, whether
    exact); None where every output is inside."""
    exact = exact_reference(monoid, x, inclusive, conv)
    sp = float_spread(monoid, x, inclusive, conv, exact)
    bound = rounding_bound(monoid, x, inclusive, conv) if exact is not None else None
    for i, d in enumerate(monoid.dtypes):
        if not is_float(d):
            bad = g[i] != sp.reference[i]
        elif bound is not None:  # proven: beyond what any order's rounding can reach
            with np.errstate(invalid="ignore"):
                bad = ~(np.abs(g[i].astype(np.float64) - sp.reference[i]) <= bound[i])
        else:
            ulp = np.spacing(np.abs(sp.reference[i]).astype(d)).astype(np.float64)
            ulp = np.where(np.isfinite(ulp), ulp, float(finfo(d).max))
            # Orders not tried round differently again: one ulp more wherever the orders
            # tried already differ, none where every one gives the answer exactly.
            allowed = SPREAD_FACTOR * sp.spread[i] + np.where(sp.spread[i] > 0, ulp, 0)
            if exact is None:
                allowed = allowed + 4 * ulp
            with np.errstate(invalid="ignore"):
                bad = ~(np.abs(g[i].astype(np.float64) - sp.reference[i]) <= allowed)
        if bad.any():
            return i, bad, sp, "bound" if bound is not None else (
                "exact" if exact is not None else "")
    return None


def _judge_spread(target: Target, monoid: Monoid, elems: Leaves, got: Leaves, axis: int
                  ) -> Failure | None:
    """A float combine: each output within :data:`SPREAD_FACTOR` times the spread of the
    association orders tried, and an ulp, around the exact answer (a rational combine: + - *
    / max min), so exactly that answer where every order gives it; otherwise around the
    float64 sequential answer, within 4 ulps more, and not proven."""
    conv = convention(target)
    inclusive = target.spec.inclusive
    if elems[0].size == 0:
        return None  # nothing to judge: the shapes were checked
    nrows = elems[0].size // elems[0].shape[axis]
    for row in range(nrows):
        x, g = _row(elems, axis, row), _row(got, axis, row)
        out = _outside(monoid, x, g, inclusive, conv)
        if out is None:
            continue
        i, bad, sp, how = out
        k = int(np.flatnonzero(bad)[-1 if conv else 0])
        at = {} if len(elems[0].shape) == 1 else {
            "row": row, "shape": list(elems[0].shape), "axis": axis}
        head = f"{monoid.name}: output {k} leaf {i} is {g[i][k].item()!r}, "
        if how == "bound":
            text = head + (f"farther from the exact answer {sp.reference[i][k].item()!r} than "
                           f"the rounding of any association order can reach (proven)")
        else:
            what = ("the exact answer (not proven: the combine divides)" if how == "exact" else
                    "the float64 sequential answer: not proven (the combine is not rational, "
                    "so there is no exact answer)")
            text = head + (f"beyond {SPREAD_FACTOR} times the spread of {sp.orders} association "
                           f"orders ({sp.spread[i][k]:.3g}) and an ulp around "
                           f"{sp.reference[i][k].item()!r}, {what}")
        why = _told_spread(monoid, x, g, inclusive, conv)
        return Failure(Cause.LOGIC, text + (f"; {why}" if why else ""), k,
                       [v[k].item() for v in g], [v[k].item() for v in sp.reference],
                       detail={"monoid": monoid.name}, at=at, reason=Reason.BEYOND_BOUND)
    return None


def _told_spread(monoid: Monoid, x: Leaves, g: Leaves, inclusive: bool, conv: str | None
                 ) -> str:
    """What a float scan did, where another convention or the operands swapped put every
    output inside the spread ('' where none does)."""
    tries: list[tuple[Monoid, str | None, str]] = [
        (monoid, other, f"the target follows reverse={other!r} ({REVERSE_CONVENTIONS[other]}), "
                        f"not the declared reverse={conv!r}" if conv and other else
                        f"the target scans {'forward' if other is None else 'in reverse'}, "
                        f"not {'forward' if conv is None else f'in reverse ({conv!r})'} as "
                        f"declared")
        for other in (None, "flip", "suffix") if other != conv]
    if not monoid.commutative:
        tries.append((_swapped(monoid), conv, "every output is the scan with combine's operands "
                      "swapped, combine(b, a) where combine(a, b) is due (operand order)"))
    for m, c, words in tries:
        if monoid.commutative and c is not None and conv is not None:
            continue  # both conventions are the same scan
        if _outside(m, x, g, inclusive, c) is None:
            return words
    return ""


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
    return Failure(Cause.OPERATOR, broken.line(monoid.name), broken.index,
                   list(broken.sides[0]), list(broken.sides[1]), independent=True,
                   reason=Reason.MONOID_LAW)


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


def monoid_summary(target: Target) -> dict[str, Any]:
    """What a passing target's verdict rests on, where it is not exact: a float combine that
    is not rational is judged against the spread of association orders, not proven."""
    monoid = monoid_of(target.spec)
    if monoid is None or not monoid.rounds:
        return {}
    from ...oracle.monoid_scan import rational

    probe = monoid.draw(np.random.default_rng(0), (4,))
    if rational(monoid) and rounding_bound(monoid, probe) is not None:
        return {"oracle": "exact rationals; each float output within the rounding bound of "
                "any association order (gamma of the longest chain of operations times the "
                "magnitudes of the terms): a failure is proven"}
    if rational(monoid):
        return {"oracle": f"exact rationals; each float output within {SPREAD_FACTOR} times "
                "the spread of 4 association orders (sequential, Kogge-Stone, tiles of 4 and "
                "32) and an ulp of the exact answer: equal to it wherever every order gives it"}
    return {"verdict": f"not proven: the combine is not rational, so each output was judged "
            f"against {SPREAD_FACTOR} times the spread of 4 association orders (sequential, "
            f"Kogge-Stone, tiles of 4 and 32) and 5 ulps around the float64 sequential answer"}
