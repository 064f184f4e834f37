"""The exact scan of any :class:`~scancheck.core.monoids.Monoid`, its laws, and what a wrong
scan of one did.

:func:`monoid_scan` folds the elements one at a time, in the order the scan's convention
defines (forward, ``reverse='flip'`` or ``reverse='suffix'``), inclusive or exclusive.  Integer
leaves are exact in their own arithmetic (two's-complement wrap is a ring homomorphism);
float leaves of a combine built from + - * / max min are folded on ``fractions.Fraction``
values and rounded once per output; any other float combine has no exact answer here, and
:func:`float_spread` gives the spread of several association orders instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.dtypes import SIGNIFICAND_BITS, finfo, is_float
from ..core.monoids import Leaves, Monoid, MonoidError
from .exact import round_fraction

#: The reverse conventions of a scan of a non-commutative operator.
REVERSE_CONVENTIONS: dict[str, str] = {
    "flip": "the result equals flip(scan(flip(x))) (jax.lax.associative_scan, Triton): "
            "out[k] = x[n-1] + ... + x[k], later indices first",
    "suffix": "out[k] = x[k] + ... + x[n-1] in index order",
}


def _moved(leaves: Leaves, axis: int) -> Leaves:
    return tuple(np.moveaxis(np.asarray(v), axis, 0) for v in leaves)


#: Longest scan folded sequentially in Python where another order gives the same answer:
#: past it an integer monoid's scan is taken in log-depth order (vectorized, equal for an
#: associative combine), so that its properties reach the sizes of the budget.
SEQUENTIAL_MAX = 2**12


def monoid_scan(monoid: Monoid, elems: Leaves, inclusive: bool = True,
                reverse: str | None = None, axis: int = 0, exact: bool = False,
                sequential: bool = False) -> Leaves:
    """The scan of ``elems`` (one array per leaf, scanned along ``axis``) by sequential
    folding: forward, or in the ``reverse`` convention of :data:`REVERSE_CONVENTIONS`; in
    the leaves' own arithmetic, or on Python numbers where ``exact`` (object arrays).  An
    integer monoid's scan longer than :data:`SEQUENTIAL_MAX` is taken by doubling instead
    (the same answer where the combine is associative), unless ``sequential``."""
    if reverse not in (None, *REVERSE_CONVENTIONS):
        raise ValueError(f"reverse={reverse!r}; allowed: None, "
                         f"{', '.join(map(repr, REVERSE_CONVENTIONS))}")
    x = _moved(elems, axis)
    n = x[0].shape[0]
    batch = x[0].shape[1:]
    if n > SEQUENTIAL_MAX and not (exact or sequential or monoid.rounds):
        return tuple(np.moveaxis(o, 0, axis) for o in _doubling(monoid, x, inclusive, reverse))
    acc = monoid.identity_like(batch)
    if exact:
        acc = tuple(_as_exact(v) for v in acc)
        x = tuple(_as_exact(v) for v in x)
    out = [np.empty((n, *batch), dtype=object if exact else v.dtype) for v in monoid.identity]
    with np.errstate(all="ignore"):  # once for the fold: its set-up costs as much as a combine
        _fold(monoid, x, acc, out, inclusive, reverse, exact)
    return tuple(np.moveaxis(o, 0, axis) for o in out)


def _fold(monoid: Monoid, x: Leaves, acc: Leaves, out: list[np.ndarray], inclusive: bool = True,
          reverse: str | None = None, exact: bool = False, at: int = 0) -> None:
    """Folds the elements of ``x`` (along axis 0) into ``acc`` one at a time, forward or
    from the last where ``reverse`` (``combine(x[k], acc)`` where 'suffix'), each result
    stored as ``out[at + k]`` after (``inclusive``) or before element ``k``.
    The caller holds ``np.errstate(all='ignore')``, as :meth:`Monoid.apply` would."""
    # monoid.apply, element by element: the combine's result checked as apply checks it
    # (the per-call set-up was most of the time of a fold of cheap combines).  Iterating a
    # leaf gives each v[k] as indexing does.
    combine, checked, suffix = monoid.combine, monoid.checked, reverse == "suffix"
    n = x[0].shape[0]
    order = range(at + n - 1, at - 1, -1) if reverse else range(at, at + n)
    for k, xk in zip(order, zip(*(v[::-1] for v in x)) if reverse else zip(*x)):
        if not inclusive:
            _store(out, k, acc, exact)
        acc = checked(combine(xk, acc), xk, exact) if suffix else checked(
            combine(acc, xk), acc, exact)
        if inclusive:
            _store(out, k, acc, exact)


def _doubling(monoid: Monoid, x: Leaves, inclusive: bool, reverse: str | None) -> Leaves:
    """:func:`monoid_scan` along axis 0 in log-depth order: a reverse scan as the forward
    scan of the flipped elements, by the combine with its operands swapped for 'suffix'
    (x[k] + (x[k+1] + ...) in index order)."""
    if reverse:
        x = tuple(v[::-1] for v in x)
    m = monoid
    if reverse == "suffix":
        m = Monoid(lambda a, b: monoid.combine(b, a), monoid.identity, name=monoid.name)
    acc = _tree_scan(m, x, 1)
    if not inclusive:
        head = monoid.identity_like((1, *x[0].shape[1:]))
        acc = tuple(np.concatenate([h, v[:-1]]) for h, v in zip(head, acc))
    return tuple(v[::-1] for v in acc) if reverse else acc


def _store(out: list[np.ndarray], k: int, acc: Leaves, exact: bool = False) -> None:
    """``out[k] = acc``, leaf by leaf (``exact``: ``out``'s arrays hold objects)."""
    if not exact:
        for o, a in zip(out, acc):
            o[k] = a
        return
    for o, a in zip(out, acc):
        # An object array would hold a 0-d array itself, not the number in it.
        o[k] = a[()] if isinstance(a, np.ndarray) and a.ndim == 0 else a


def _as_exact(v: np.ndarray) -> np.ndarray:
    """Float leaves as object arrays of Fractions (exact); other leaves as they are."""
    v = np.asarray(v)
    if not is_float(v.dtype):
        return v
    out = np.empty(v.size, dtype=object)
    out[:] = [Fraction(e) for e in v.ravel().tolist()]  # tolist: each as float(e) gives it
    return out.reshape(v.shape)


def rational(monoid: Monoid, probe: Leaves | None = None) -> bool:
    """Whether ``monoid``'s combine evaluates exactly on Fractions: built from + - * / max min
    (a call on object arrays of Fractions returns Fractions and integers only)."""
    # An infinite identity (max's -inf) is no rational: such a combine is judged in floats.
    if not all(np.isfinite(np.asarray(v, np.float64)).all()
               for v, d in zip(monoid.identity, monoid.dtypes) if is_float(d)):
        return False
    rng = np.random.default_rng(0)
    probe = probe or monoid.draw(rng, (4,))
    try:
        a = tuple(_as_exact(v) for v in probe)
        out = monoid.apply(a, a, exact=True)
    except (TypeError, AttributeError, ValueError, ArithmeticError, MonoidError):
        return False
    return all(all(isinstance(e, Fraction | int | np.integer) for e in np.asarray(v).ravel())
               for v, d in zip(out, monoid.dtypes) if is_float(d))


def rounded(monoid: Monoid, leaves: Leaves) -> Leaves:
    """Exact (object array) leaves rounded once to their leaves' dtypes."""
    out = []
    for v, d in zip(leaves, monoid.dtypes):
        if is_float(d):
            flat = [round_fraction(Fraction(e), d) for e in np.asarray(v).ravel()]
            out.append(np.asarray(flat, dtype=d).reshape(np.shape(v)))
        else:
            out.append(np.asarray(v).astype(d))
    return tuple(out)


def exact_monoid_scan(monoid: Monoid, elems: Leaves, inclusive: bool = True,
                      reverse: str | None = None, axis: int = 0) -> Leaves | None:
    """The exact answer: integer leaves (and a monoid declared ``exact``) in their own
    arithmetic, rational float combines rounded once per output; None where the combine has
    float leaves and is not rational."""
    if not monoid.rounds:
        return monoid_scan(monoid, elems, inclusive, reverse, axis)
    if not rational(monoid) or not all(np.isfinite(v).all() for v, d in
                                       zip(elems, monoid.dtypes) if is_float(d)):
        return None
    return rounded(monoid, monoid_scan(monoid, elems, inclusive, reverse, axis, exact=True))


def _wide(monoid: Monoid) -> Monoid:
    """``monoid`` with float leaves carried in float64 (the elements widened by the caller)."""
    ident = tuple(np.float64(v) if is_float(v.dtype) else v for v in monoid.identity)
    return Monoid(monoid.combine, ident, name=monoid.name + " (float64)",
                  commutative=monoid.commutative)


def _tree_scan(monoid: Monoid, x: Leaves, span: int) -> Leaves:
    """An inclusive forward scan along axis 0 in another association order: tiles of
    ``span`` scanned sequentially, the tiles' totals scanned, each carried into its tile
    (span 1: Kogge-Stone doubling, a log-depth order)."""
    n = x[0].shape[0]
    if span == 1:
        acc = tuple(np.array(v) for v in x)
        d = 1
        while d < n:
            head = tuple(v[:-d] for v in acc)
            tail = tuple(v[d:] for v in acc)
            new = monoid.apply(head, tail)
            acc = tuple(np.concatenate([a[:d], b]) for a, b in zip(acc, new))
            d *= 2
        return acc
    out = tuple(np.array(v) for v in x)
    # Each tile's sequential scan, folded as monoid_scan(monoid, tile) folds it (from a fresh
    # identity, each result checked, into arrays of the leaves' dtypes), without its set-up
    # per tile: that cost more than a tile of four elements.
    batch = x[0].shape[1:]
    scanned = [np.empty((n, *batch), dtype=v.dtype) for v in monoid.identity]
    carry = None
    with np.errstate(all="ignore"):
        for lo in range(0, n, span):
            hi = min(lo + span, n)
            _fold(monoid, tuple(v[lo:hi] for v in x), monoid.identity_like(batch), scanned,
                  at=lo)
            local = tuple(v[lo:hi] for v in scanned)
            if carry is not None:  # monoid.apply, under the errstate already set
                carried = tuple(np.broadcast_to(c, v.shape) for c, v in zip(carry, local))
                local = monoid.checked(monoid.combine(carried, local), carried)
            for o, v in zip(out, local):
                o[lo:hi] = v
            carry = tuple(v[-1] for v in local)
    return out


@dataclass
class Spread:
    """Per output and leaf: the float64 answer of the sequential order, and the largest
    distance from it of the other association orders evaluated in the leaf's own dtype."""

    reference: Leaves
    spread: Leaves
    orders: int


def float_spread(monoid: Monoid, elems: Leaves, inclusive: bool = True,
                 reverse: str | None = None, reference: Leaves | None = None) -> Spread:
    """The spread of association orders of a float combine on 1-D ``elems``: the sequential,
    Kogge-Stone and tiled (4, 32) orders in the leaves' own dtypes, each compared with
    ``reference`` (the exact answer, where the caller has one) or else with the sequential
    order in float64.  ``reverse='suffix'`` of a non-commutative combine is the 'flip' scan
    of the combine with its operands swapped."""
    if reverse == "suffix" and not monoid.commutative:
        swapped = Monoid(lambda a, b: monoid.combine(b, a), monoid.identity, name=monoid.name)
        return float_spread(swapped, elems, inclusive, "flip", reference)
    x = tuple(np.asarray(v) for v in elems)
    if reverse:
        x = tuple(v[::-1] for v in x)

    def framed(r: Leaves) -> Leaves:
        """An inclusive forward scan of the (flipped) input as the target's outputs."""
        if not inclusive:
            r = tuple(np.concatenate([[e.astype(v.dtype)], v[:-1]])
                      for e, v in zip(monoid.identity, r))
        return tuple(v[::-1] for v in r) if reverse else r

    runs = [framed(r) for r in [monoid_scan(monoid, x)] + [_tree_scan(monoid, x, s)
                                                              for s in (1, 4, 32)]]
    if reference is None and all(d == "float64" for d in monoid.dtypes if is_float(d)):
        reference = runs[0]  # the sequential order in float64 is the one just folded
    elif reference is None:
        widened = tuple(v.astype(np.float64) if is_float(v.dtype) else v for v in x)
        reference = framed(monoid_scan(_wide(monoid), widened))
    ref = tuple(np.asarray(v, dtype=np.float64) if is_float(d) else np.asarray(v)
                for v, d in zip(reference, monoid.dtypes))
    spread = []
    for i, d in enumerate(monoid.dtypes):
        if not is_float(d):
            spread.append(np.zeros(ref[i].shape))
            continue
        with np.errstate(all="ignore"):
            spread.append(np.max([np.abs(r[i].astype(np.float64) - ref[i]) for r in runs],
                                 axis=0))
    return Spread(ref, tuple(spread), len(runs))


def exact_reference(monoid: Monoid, elems: Leaves, inclusive: bool = True,
                    reverse: str | None = None) -> Leaves | None:
    """The exact answer of a rational float combine with its float leaves correctly rounded
    to float64 (a reference finer than the leaves' dtypes), or None where there is none."""
    if not rational(monoid) or not all(np.isfinite(v).all() for v, d in
                                       zip(elems, monoid.dtypes) if is_float(d)):
        return None
    exact = monoid_scan(monoid, elems, inclusive, reverse, exact=True)
    # Rounded once, an infinity of its sign past float64's range (which float() refuses).
    return tuple(np.asarray([round_fraction(Fraction(e), "float64")
                             for e in np.asarray(v).ravel()]).reshape(np.shape(v))
                 if is_float(d) else np.asarray(v).astype(d)
                 for v, d in zip(exact, monoid.dtypes))


class _Magnitude:
    """A bound on the magnitude of a value computed with + - * max min (subtraction adds
    magnitudes), and the longest chain of rounding operations behind it.  Division has no
    such bound without a floor on the divisor: it raises, and the combine is not bounded."""

    __slots__ = ("m", "d")

    def __init__(self, m: float, d: int = 0) -> None:
        self.m, self.d = m, d

    @staticmethod
    def of(v: Any) -> _Magnitude:
        return v if isinstance(v, _Magnitude) else _Magnitude(abs(float(v)))

    def _op(self, other: Any, mul: bool) -> Any:
        if isinstance(other, np.ndarray):
            return NotImplemented  # NumPy applies the operation element by element
        o = _Magnitude.of(other)
        return _Magnitude(self.m * o.m if mul else self.m + o.m, max(self.d, o.d) + 1)

    def __add__(self, o: Any) -> Any:
        return self._op(o, False)

    __radd__ = __sub__ = __rsub__ = __add__

    def __mul__(self, o: Any) -> Any:
        return self._op(o, True)

    __rmul__ = __mul__

    def __neg__(self) -> _Magnitude:
        return self

    __pos__ = __abs__ = __neg__

    # A selection (max, min) rounds nothing: the larger magnitude bounds either choice.
    def __gt__(self, o: Any) -> bool:
        return self.m > _Magnitude.of(o).m

    def __ge__(self, o: Any) -> bool:
        return self.m >= _Magnitude.of(o).m

    def __lt__(self, o: Any) -> bool:
        return self.m < _Magnitude.of(o).m

    def __le__(self, o: Any) -> bool:
        return self.m <= _Magnitude.of(o).m

    def __truediv__(self, o: Any) -> _Magnitude:
        raise TypeError("a quotient's magnitude has no bound without a floor on the divisor")

    __rtruediv__ = __truediv__


def _as_magnitudes(v: np.ndarray) -> np.ndarray:
    out = np.empty(np.shape(v), dtype=object)
    for idx, e in np.ndenumerate(np.asarray(v)):
        out[idx] = _Magnitude(abs(float(e)))
    return out


def rounding_bound(monoid: Monoid, elems: Leaves, inclusive: bool = True,
                   reverse: str | None = None) -> Leaves | None:
    """Per output and float leaf of a 1-D scan: how far any association order, evaluated in
    the leaf's dtype, may lie from the exact answer -- gamma(D) times the magnitudes of its
    terms (every subtraction an addition), D the longest chain of operations any order has
    (the sequential one's), plus D smallest subnormals for underflow; infinite where those
    magnitudes reach past the dtype's largest value, so that some order may overflow, and
    at each output the scan reaches after such a one.  None where the combine is not built
    from + - * max min alone (a division, a function)."""
    x = tuple(_as_magnitudes(v) if is_float(d) else np.asarray(v)
              for v, d in zip(elems, monoid.dtypes))
    mag = Monoid(monoid.combine, monoid.identity, name=monoid.name)
    mag.identity_like = lambda shape: tuple(  # type: ignore[method-assign]
        _as_magnitudes(np.full(shape, v)) if is_float(v.dtype) else np.full(shape, v)
        for v in monoid.identity)
    try:
        with np.errstate(all="ignore"):
            out = monoid_scan(mag, x, inclusive, reverse, exact=True)
    except (TypeError, AttributeError, ValueError, ArithmeticError, MonoidError):
        return None
    bounds = []
    for v, d in zip(out, monoid.dtypes):
        if not is_float(d):
            bounds.append(np.zeros(np.shape(v)))
            continue
        flat = np.asarray(v).ravel()
        if not all(isinstance(e, _Magnitude) for e in flat):
            return None
        u = 2.0 ** -SIGNIFICAND_BITS[d]
        depth = np.array([e.d + 1 for e in flat], dtype=np.float64)  # the output's rounding too
        m = np.array([e.m for e in flat], dtype=np.float64)
        with np.errstate(all="ignore"):
            gamma = np.where(depth * u < 1, depth * u / (1 - depth * u), np.inf)
            tiny = float(finfo(d).smallest_subnormal)
            bound = gamma * m * 1.01 + depth * tiny
            # An output past which the sequential order may overflow: it and every output
            # after it (each combines it, inf * 0 a NaN) may hold anything.
            over = m * (1 + gamma) * 1.01 >= float(finfo(d).max)
            over = (np.logical_or.accumulate(over[::-1])[::-1] if reverse
                    else np.logical_or.accumulate(over))
            bound[over] = np.inf
            bounds.append(bound.reshape(np.shape(v)))
    return tuple(bounds)


@dataclass
class LawBroken:
    """A monoid law that fails at drawn triple ``index``, with the simplest operands found
    on which it fails (shrunk from that triple's) and both sides there."""

    law: str
    index: int
    operands: dict[str, Any]
    sides: tuple[Any, Any]
    #: Where a float combine's sides differ by rounding alone in size (under 2**20 units of
    #: roundoff of their magnitude, more than the 64 allowed): how many.
    roundoffs: float | None = None

    def line(self, name: str) -> str:
        ops = ", ".join(f"{k}={v}" for k, v in self.operands.items())
        near = "" if self.roundoffs is None else (
            f" (the sides differ by {self.roundoffs:.0f} units of roundoff of their magnitude, "
            f"64 allowed: the combine's rounding grown where its terms cancel; operands "
            f"outside the monoid's domain are left out by declaring elements=)")
        return (f"the operator {name!r} is no monoid: {self.law} fails at {ops}: "
                f"{self.sides[0]} != {self.sides[1]}{near}")


def _at(leaves: Leaves, i: int) -> tuple:
    """Element ``i`` of each leaf as Python numbers (exact leaves hold Fractions already)."""
    picked = (np.asarray(v)[i] for v in leaves)
    return tuple(e.tolist() if isinstance(e, np.ndarray | np.generic) else e for e in picked)


def _differ(monoid: Monoid, a: Leaves, b: Leaves, exact: bool, scale: np.ndarray
            ) -> np.ndarray:
    """Per element: whether the leaves of ``a`` and ``b`` differ: exactly, or for floats that
    are not rational by more than 64 units of roundoff of the largest magnitude among both
    sides and ``scale`` (the operands': a law's two sides round differently), NaN equal to NaN;
    an infinity against a finite value is within it (one association may overflow where the
    other does not), against the opposite infinity not."""
    bad = np.zeros(np.shape(a[0]), dtype=bool)
    for u, v, d in zip(a, b, monoid.dtypes):
        if exact or not is_float(d):
            bad |= np.asarray(u != v, dtype=bool)
            continue
        u64, v64 = np.asarray(u, np.float64), np.asarray(v, np.float64)
        with np.errstate(invalid="ignore"):
            big = np.fmax(np.fmax(np.abs(u64), np.abs(v64)), scale)
            tol = 64 * float(finfo(d).eps) * big
            within = (np.abs(u64 - v64) <= tol) & ~(np.isinf(u64) & np.isinf(v64))
            bad |= ~(within | (np.isnan(u64) & np.isnan(v64)) | (u64 == v64))
    return bad


def _magnitude(monoid: Monoid, *operands: Leaves) -> np.ndarray:
    """Per element: the largest finite magnitude of any float leaf of ``operands``."""
    out = np.zeros(np.shape(operands[0][0]))
    for t in operands:
        for v, d in zip(t, monoid.dtypes):
            if is_float(d):
                w = np.abs(np.asarray(v, np.float64))
                out = np.fmax(out, np.where(np.isfinite(w), w, 0))
    return out


@dataclass(frozen=True)
class _Law:
    """One monoid law: its words, the operands it names, and its two sides from the
    checked combine ``ap`` and the identity ``e``."""

    words: str
    names: str
    sides: Callable[..., tuple[Leaves, Leaves]]


_LAWS = (
    _Law("associativity combine(combine(a, b), c) == combine(a, combine(b, c))", "abc",
         lambda ap, e, a, b, c: (ap(ap(a, b), c), ap(a, ap(b, c)))),
    _Law("the identity on the left: combine(identity, a) == a", "a",
         lambda ap, e, a, b, c: (ap(e, a), a)),
    _Law("the identity on the right: combine(a, identity) == a", "a",
         lambda ap, e, a, b, c: (ap(a, e), a)),
)
_COMMUTATIVITY = _Law("commutativity (declared): combine(a, b) == combine(b, a)", "ab",
                      lambda ap, e, a, b, c: (ap(a, b), ap(b, a)))

#: The values a law's operands are shrunk to, simplest first, leaf by leaf, where the
#: monoid's leaves range over their dtypes (no element strategy of its own): each lies in
#: what :meth:`Monoid.draw` draws there.
_SIMPLE = (0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 8, -8, 0.5, -0.5, 1.5, -1.5)


class _Laws:
    """The laws of one monoid, judged on triples (a, b, c) of equal-length leaves: exactly
    (``exact``: float leaves as Fractions), in its own arithmetic bit for bit where declared
    exact, or else within 64 units of roundoff of the largest magnitude (:func:`_differ`)."""

    def __init__(self, monoid: Monoid, exact: bool) -> None:
        self.monoid, self.exact = monoid, exact
        self.strict = exact or monoid.exact
        self.laws = _LAWS + ((_COMMUTATIVITY,) if monoid.commutative else ())

    def lifted(self, triple: tuple[Leaves, ...]) -> tuple[Leaves, ...]:
        """The triple as the laws are evaluated on it: float leaves as Fractions where exact."""
        return tuple(tuple(_as_exact(v) for v in t) for t in triple) if self.exact else triple

    def sides(self, law: _Law, triple: tuple[Leaves, ...],
              lifted: tuple[Leaves, ...] | None = None) -> tuple[Leaves, Leaves]:
        """Both sides of ``law`` per element of the triple (``lifted``: the triple already
        through :meth:`lifted`, which a search over every law converts once)."""
        e = self.lifted((self.monoid.identity_like(np.shape(triple[0][0])),))[0]

        def ap(p: Leaves, q: Leaves) -> Leaves:
            return self.monoid.apply(p, q, self.exact)

        return law.sides(ap, e, *(lifted or self.lifted(triple)))

    def fails(self, law: _Law, triple: tuple[Leaves, ...],
              lifted: tuple[Leaves, ...] | None = None) -> np.ndarray:
        """Per element of the triple: whether ``law`` fails there."""
        scale = np.zeros(np.shape(triple[0][0])) if self.strict else _magnitude(self.monoid,
                                                                               *triple)
        return _differ(self.monoid, *self.sides(law, triple, lifted), self.strict, scale)

    def fails_alone(self, law: _Law, triple: tuple[Leaves, ...]) -> bool:
        """Whether ``law`` fails on the one-element ``triple`` evaluated by itself (a combine
        that is not elementwise can tell a batch apart from its elements); False where the
        combine raises on it."""
        try:
            return bool(self.fails(law, triple)[0])
        except Exception:
            return False

    def shrunk(self, law: _Law, triple: tuple[Leaves, ...]) -> tuple[Leaves, ...]:
        """The triple (one element each) with the operands ``law`` names made simpler while
        it still fails: each leaf in turn set to the simplest of :data:`_SIMPLE` that keeps
        it failing, or, for a monoid with elements of its own, each operand to the simplest
        of :data:`POOL_SHRINK` of them that does, until none changes."""
        pool = None
        if self.monoid.has_elements:  # its elements, simplest first, with their costs
            drawn = self.monoid.draw(np.random.default_rng(0), (POOL_SHRINK,))
            costs = _costs(drawn)
            order = np.argsort(costs, kind="stable")
            pool = (tuple(v[order] for v in drawn), costs[order])
        triple = list(triple)
        for _ in range(8):  # each pass simpler, or the last
            before = _costs(tuple(np.concatenate(v) for v in zip(*triple))).sum()
            for k in ("abc".index(name) for name in law.names):
                leaves = range(len(triple[k])) if pool is None else (None,)
                for j in leaves:
                    cands = self._candidates(triple[k], j, pool)
                    if cands is None:
                        continue
                    m = cands[0].shape[0]
                    trial = [tuple(np.repeat(v, m) for v in t) for t in triple]
                    trial[k] = cands
                    bad = self._failing(law, trial, k)
                    if bad.any():
                        i = int(np.argmax(bad))
                        simpler = [*triple[:k], tuple(v[i:i + 1] for v in cands),
                                   *triple[k + 1:]]
                        if self.fails_alone(law, tuple(simpler)):
                            triple = simpler
            if _costs(tuple(np.concatenate(v) for v in zip(*triple))).sum() >= before:
                break
        return tuple(triple)

    def _failing(self, law: _Law, trial: list[Leaves], k: int) -> np.ndarray:
        """Per candidate of operand ``k`` of ``trial``: whether ``law`` fails there; one by
        one where the combine raises on the batch (a division by a candidate 0), and False
        for those it raises on."""
        try:
            return self.fails(law, tuple(trial))
        except Exception:
            pass
        return np.array([self.fails_alone(law, tuple(tuple(v[i:i + 1] for v in t)
                                                       for t in trial))
                         for i in range(trial[k][0].shape[0])], dtype=bool)

    def _candidates(self, element: Leaves, leaf: int | None,
                    pool: tuple[Leaves, np.ndarray] | None) -> Leaves | None:
        """Elements simpler than ``element``, simplest first: ``leaf`` set to the simpler of
        :data:`_SIMPLE` its dtype holds, or (``leaf`` None) the simpler elements of ``pool``
        (elements sorted by their costs, and those costs)."""
        if pool is not None:
            elements, costs = pool
            keep = int(np.searchsorted(costs, _costs(element)[0]))  # those of lower cost
            return tuple(v[:keep] for v in elements) if keep else None
        dt = np.dtype(element[leaf].dtype)
        values = [v for v in _SIMPLE if _holds(dt, v)]
        vals = np.array(values, dtype=dt)
        vals = vals[_costs((vals,)) < _costs((element[leaf],))[0]]
        if not vals.size:
            return None
        return tuple(vals if i == leaf else np.repeat(v, vals.size) for i, v in enumerate(element))


#: How many of its own elements a monoid with a domain of its own offers the shrinking of a
#: broken law.
POOL_SHRINK = 256


def _holds(dt: np.dtype, v: float) -> bool:
    """Whether ``dt`` holds ``v`` exactly (no bool but 0 and 1, no unsigned negative)."""
    if dt == np.bool_:
        return v in (0, 1)
    if not is_float(dt):
        info = np.iinfo(dt)
        return float(v).is_integer() and info.min <= v <= info.max
    return True


def _costs(leaves: Leaves) -> np.ndarray:
    """Per element: how far from simple, summed over the leaves: 0 for zero, then small
    integers by magnitude, then other values by their significand bits and magnitude."""
    total = np.zeros(np.shape(leaves[0]))
    for v in leaves:
        w = np.abs(np.asarray(v, np.float64))
        with np.errstate(all="ignore"):
            frac = np.where(np.isfinite(w), w - np.floor(w), 1.0)
            mant = np.frexp(np.where(np.isfinite(w), w, 1.0))[0]
            bits = np.array([_bits(float(f)) for f in mant.ravel()]).reshape(w.shape)
            total += np.where(~np.isfinite(w), 1e6,
                              np.where(frac == 0, np.log2(1 + w), 64 + bits + np.log2(1 + w)))
    return total


def _bits(mantissa: float) -> int:
    """Significand bits of a value in [0.5, 1): its numerator's, in lowest terms."""
    return Fraction(mantissa).numerator.bit_length()


def broken_law(monoid: Monoid, count: int, seed: int) -> LawBroken | None:
    """The first of ``count`` drawn triples on which associativity, the identity (on either
    side) or a declared commutativity fails, its operands shrunk to the simplest values on
    which that law still fails (:meth:`_Laws.shrunk`); None where all hold.  Exact for integer
    leaves, rational float combines and a monoid declared exact (in its own arithmetic);
    other float combines within 64 units of roundoff of the largest magnitude in the law
    (:func:`_differ`)."""
    rng = np.random.default_rng(seed)
    drawn = tuple(monoid.draw(rng, (count,)) for _ in range(3))
    # A monoid declared exact is held to its own arithmetic: a law that rounds breaks it.
    laws = _Laws(monoid, bool(monoid.rounds and rational(monoid, drawn[0])))
    lifted = laws.lifted(drawn)
    first = None
    for law in laws.laws:
        bad = laws.fails(law, drawn, lifted)
        if bad.any() and (first is None or int(np.argmax(bad)) < first[1]):
            first = (law, int(np.argmax(bad)))
    if first is None:
        return None
    law, i = first
    triple = tuple(tuple(v[i:i + 1] for v in t) for t in drawn)
    if laws.fails_alone(law, triple):
        triple = laws.shrunk(law, triple)
        shown, at = laws.sides(law, triple), 0
    else:  # a combine that is not elementwise: the drawn triple, its sides in the batch
        shown, at = laws.sides(law, drawn, lifted), i
    sides = (_at(shown[0], at), _at(shown[1], at))
    return LawBroken(law.words, i,
                     {k: _shown(_at(triple["abc".index(k)], 0)) for k in law.names},
                     (_shown(sides[0]), _shown(sides[1])),
                     None if laws.strict else _roundoffs(monoid, *sides))


def _roundoffs(monoid: Monoid, left: tuple, right: tuple) -> float | None:
    """How many units of roundoff of their magnitude the float leaves of two sides differ by
    at most, where every leaf is finite, the integer leaves equal, and that is under 2**20
    (a law broken by rounding in size); else None."""
    worst = 0.0
    for u, v, d in zip(left, right, monoid.dtypes):
        if not is_float(d):
            if u != v:
                return None
            continue
        u, v = float(u), float(v)
        if not (math.isfinite(u) and math.isfinite(v)):
            return None
        big = max(abs(u), abs(v))
        if big:
            worst = max(worst, abs(u - v) / (float(finfo(d).eps) * big))
    return worst if 0 < worst < 2**20 else None


def _shown(t: tuple) -> tuple:
    return tuple(float(v) if isinstance(v, Fraction) else v for v in t)


def wrong_order_split(monoid: Monoid, elems: Leaves, k: int, got: tuple) -> int | None:
    """For a forward inclusive output ``k`` of 1-D ``elems`` whose value is ``got`` (one
    scalar per leaf): the j in [1, k] such that ``got`` is the partial result of x[j:k+1]
    combined before that of x[:j] (the two halves swapped), or None."""
    x = tuple(np.asarray(v)[:k + 1] for v in elems)
    heads = monoid_scan(monoid, x)
    tails = monoid_scan(monoid, x, reverse="suffix")  # tails[j] = x[j] + ... + x[k]
    # Every split at once: tails[j] combined before heads[j - 1], for j = 1 .. k.
    both = monoid.apply(tuple(v[1:k + 1] for v in tails), tuple(v[:k] for v in heads))
    same = np.ones(k, dtype=bool)
    for v, g in zip(both, got):
        same &= np.asarray(v) == g
    return int(np.argmax(same)) + 1 if same.any() else None
