"""The verdict on a monoid scan's outputs: each against the exact scan of its elements in the
target's declared convention, or, for a float combine that rounds, within the spread of
association orders around it; where they are wrong, what the target did, if one of the
usual mistakes (the other reverse convention, the operands swapped, partial results
combined later-first, one leaf's arithmetic) explains every output of a short case and of
a longer one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.dtypes import finfo, is_float
from ...core.monoids import Leaves, Monoid
from ...oracle.monoid_scan import (
    REVERSE_CONVENTIONS,
    SEQUENTIAL_MAX,
    exact_monoid_scan,
    exact_reference,
    float_spread,
    monoid_scan,
    rational,
    rounding_bound,
    wrong_order_split,
)
from ...targets.spec import monoid_of, reverse_convention
from ...targets.target import Target
from ..diagnosis import Cause, Reason
from .base import Contract, Failure
from .values import CONVENTIONS

#: How far past the spread of the association orders tried a float output may lie: other
#: orders (a target's tiles) round differently again.
SPREAD_FACTOR = 4


def convention(target: Target) -> str | None:
    """The spec's reverse convention: None forward; True (a commutative operator) as 'flip'."""
    return reverse_convention(target.spec.reverse)


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
    fits = _fitting(monoid, elems, got, axis, rerun)
    other = _other_inclusivity(target, monoid, fits)
    if other is not None:
        return other
    text = (f"{monoid.name}: output {k} is {g}, the {'inclusive' if spec.inclusive else 'exclusive'}"
            f" {'forward' if not conv else repr(conv)} scan gives {w}")
    why = _told(target, monoid, elems, got, want, axis, row, k, g, fits)
    at = {} if len(elems[0].shape) == 1 else {
        "row": row, "shape": list(elems[0].shape), "axis": axis}
    detail = {"monoid": monoid.name, "n": n}
    return Failure(Cause.LOGIC, text + (f": {why}" if why else ""), k, list(g), list(w),
                   detail=detail, at=at, reason=Reason.WRONG_VALUE)


#: Whether a target's outputs are every output of the scan by a monoid, inclusive or not,
#: in a reverse convention (None: forward): :func:`_fitting`'s answer.
Fits = Callable[[Monoid, bool, "str | None"], bool]


def _fitting(monoid: Monoid, elems: Leaves, got: Leaves, axis: int, rerun: Rerun | None
             ) -> Fits:
    """Whether ``got`` is every output of a scan of ``elems`` (in ``monoid``'s leaves), and
    so is the output of ``rerun``'s longer case (a short case fits a wrong story by chance),
    which is run once, when a scan first fits."""
    longer: list[tuple[Leaves, Leaves] | None] = []

    def fits(m: Monoid, inclusive: bool, c: str | None) -> bool:
        if not _same(monoid, got, monoid_scan(m, elems, inclusive, c, axis)).all():
            return False
        if rerun is None:
            return True
        if not longer:
            longer.append(rerun())
        if longer[0] is None:
            return False
        more, out = longer[0]
        return bool(_same(monoid, out, monoid_scan(m, more, inclusive, c, axis)).all())

    return fits


def _other_inclusivity(target: Target, monoid: Monoid, fits: Fits) -> Failure | None:
    """The contract failure of a target whose outputs are the scan of the other inclusivity
    than its spec's (an exclusive scan declared inclusive), as ``fits`` holds them: None
    where not."""
    spec = target.spec
    if not fits(monoid, not spec.inclusive, convention(target)):
        return None
    # The words and the flag are the 1-D conventions' own.
    _, _, behaviour, flag, _ = next(c for c in CONVENTIONS
                                    if c[:2] == ("inclusive", not spec.inclusive))
    return Failure(Cause.CONTRACT, f"{monoid.name}: {behaviour}, where its spec declares "
                   f"inclusive={spec.inclusive}: declare {flag}", detail={"contract": flag},
                   contract=Contract(behaviour, flag, (("inclusive", not spec.inclusive),)),
                   reason=Reason.UNDECLARED)


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
          row: int, k: int, g: tuple, fits: Fits) -> str:
    """What the target did (``due`` the scan it owes), where one of the usual mistakes
    explains every output as ``fits`` holds them, or the wrong output alone; '' where none
    does."""
    spec = target.spec
    conv = convention(target)
    if conv is not None:
        other = "suffix" if conv == "flip" else "flip"
        if fits(monoid, spec.inclusive, other):
            return (f"the target follows reverse={other!r} ({REVERSE_CONVENTIONS[other]}), "
                    f"not the declared reverse={conv!r}")
    for other in ([None] if conv else list(REVERSE_CONVENTIONS)):
        if fits(monoid, spec.inclusive, other):
            return (f"the target scans {'forward' if other is None else 'in reverse'} "
                    f"({'out[k] combines x[:k+1]' if other is None else REVERSE_CONVENTIONS[other]})"
                    f", not {'forward' if conv is None else f'in reverse ({conv!r})'} as declared")
    if not monoid.commutative and fits(_swapped(monoid), spec.inclusive, conv):
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
    mine = tuple(v[k].item() for v in x)
    if spec.inclusive and k != first_out and _same(monoid, tuple(np.asarray([u]) for u in g),
                                                     tuple(np.asarray([u]) for u in mine)).all():
        before = k + 1 if conv == "flip" else k - 1
        if conv != "suffix" and _pick(due, axis, row, before) == _pick(due, axis, row, k):
            # combine keeps the earlier result here: a selection made the other way (a max
            # with its index taking the later of equal values) looks the same as a skip.
            ties = [i for i, (u, v) in enumerate(zip(mine, _pick(due, axis, row, before)))
                    if u == v]
            tie = (f" (x[{k}] and that result agree on leaf {', '.join(map(str, ties))}: a "
                   f"tie taken by the later element?)" if ties else "")
            return (f"output {k} is element {k} itself where combine keeps the result before "
                    f"it: none of the elements before it combined in, or combine's choice made "
                    f"the other way{tie}")
        return (f"output {k} is element {k} itself, none of the elements before it combined "
                f"in (a step of the scan skipped?)")
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
                # Where some order may overflow, inf - inf in another may give NaN.
                bad = ~((np.abs(g[i].astype(np.float64) - sp.reference[i]) <= bound[i])
                        | (np.isnan(g[i]) & np.isinf(bound[i])))
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
        for other in (None, *REVERSE_CONVENTIONS) if other != conv]
    if not monoid.commutative:
        tries.append((_swapped(monoid), conv, "every output is the scan with combine's operands "
                      "swapped, combine(b, a) where combine(a, b) is due (operand order)"))
    for m, c, words in tries:
        if monoid.commutative and c is not None and conv is not None:
            continue  # both conventions are the same scan
        if _outside(m, x, g, inclusive, c) is None:
            return words
    return ""


def monoid_summary(target: Target) -> dict[str, Any]:
    """What a passing target's verdict rests on, where it is not exact: a float combine that
    is not rational is judged against the spread of association orders, not proven."""
    monoid = monoid_of(target.spec)
    if monoid is None or not monoid.rounds:
        return {}
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
