"""Operators over tuples of arrays: a user's :class:`Monoid`, and scancheck's probe monoids.

A :class:`Monoid` is what ``jax.lax.associative_scan``, torch's ``associative_scan`` and
Triton's ``tl.associative_scan`` take: ``combine(a, b)`` of two tuples of arrays (``a`` the
earlier elements, ``b`` the later), elementwise, returning a tuple of as many arrays; and its
identity, a tuple of scalars whose dtypes are the leaves' dtypes.  The probe monoids
(:data:`PROBES`) drive a scan that takes the combine as an argument: each is exact in
integer arithmetic, and all but the built-in operators are non-commutative, so that every
element skipped, duplicated or taken in the wrong order changes the answer.  Their combines
use only operators and the array's own namespace, so JAX and torch can trace them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .arrays import as_dtype, dtype_name
from .dtypes import is_float
from .operators import OPERATORS

Leaves = tuple[Any, ...]
Combine = Callable[[Leaves, Leaves], Leaves]
#: Draws ``shape`` elements: ``elements(rng, shape)`` returns one array per leaf.
Elements = Callable[[np.random.Generator, tuple[int, ...]], Leaves]

#: What a combine may return its leaves in (a tuple, not ``tuple | list`` built anew at every
#: combine of a fold).
_SEQUENCES = (tuple, list)
#: The dtype of an exact fold's leaves (Python numbers).
_OBJECT = np.dtype(object)
#: The leaf dtypes a monoid may have: every numeric dtype NumPy holds natively, and bool.
LEAF_DTYPES: tuple[str, ...] = ("float32", "float64", "float16", "int8", "int16", "int32",
                                "int64", "uint8", "uint16", "uint32", "uint64", "bool")


class Monoid:
    """An associative ``combine`` over tuples of arrays with an identity: an operator a scan
    target may declare (``TargetSpec(op=monoid)``) beside the built-in ones.  ``elements``,
    where it is a monoid only on a domain (the bicyclic monoid's non-negative pairs): a
    Hypothesis strategy of one element (a tuple of scalars, one per leaf), or a function
    ``elements(rng, shape)`` returning one array per leaf; its laws and its scans are
    checked on elements of that domain alone.  ``exact``: every association order gives the
    same leaves on those elements (float leaves whose combines never round there), so that
    its scans are judged exactly, as integer ones are, at any n."""

    def __init__(self, combine: Combine, identity: Sequence[Any], *, name: str,
                 commutative: bool = False, elements: Elements | None = None,
                 exact: bool = False) -> None:
        if not callable(combine):
            raise TypeError(f"combine={combine!r} must be callable as combine(a, b), a and b "
                            f"tuples of arrays")
        if not isinstance(name, str) or not name:
            raise ValueError(f"name={name!r} must be a non-empty string")
        if isinstance(identity, np.ndarray | str | bytes) or not isinstance(identity, Sequence) \
                or not identity:
            raise TypeError(f"identity={identity!r} must be a non-empty tuple of scalars, one "
                            f"per leaf (their dtypes are the leaves' dtypes)")
        ident = []
        for i, v in enumerate(identity):
            arr = np.asarray(v)
            if arr.ndim != 0 or arr.dtype.name not in LEAF_DTYPES:
                raise TypeError(f"identity[{i}]={v!r} must be a scalar of one of "
                                f"{', '.join(LEAF_DTYPES)} (np.uint32(1), 0.0, ...)")
            ident.append(arr)
        if elements is not None and not (callable(elements) or _is_strategy(elements)):
            raise TypeError(f"elements={elements!r} must be a Hypothesis strategy of one "
                            f"element (a tuple of scalars, one per leaf), or callable as "
                            f"elements(rng, shape), returning one array per leaf")
        self.combine = combine
        self.identity: Leaves = tuple(ident)
        self.name = name
        self.commutative = bool(commutative)
        self.exact = bool(exact)
        self._elements = elements
        #: ``module:ATTR`` where it was loaded from (a child process loads it again there).
        self.locator: str | None = None
        self._bound: BoundCombine | None = None
        self._pools: dict[int, Leaves] = {}

    @property
    def bound(self) -> BoundCombine:
        """The combine as targets are handed it, the same object every time (a JIT compiler
        caches what it traced by the function)."""
        if self._bound is None:
            self._bound = BoundCombine(self)
        return self._bound

    def __deepcopy__(self, memo: dict[int, Any]) -> Monoid:
        return self  # a spec's asdict copies its fields; an operator is a value, not state

    def __repr__(self) -> str:
        return f"Monoid({self.name!r}, leaves {', '.join(self.dtypes)})"

    @property
    def dtypes(self) -> tuple[str, ...]:
        """The leaves' dtypes, as the identity gives them."""
        return tuple(dtype_name(v.dtype) for v in self.identity)

    @property
    def floats(self) -> bool:
        """Whether some leaf is a float."""
        return any(is_float(d) for d in self.dtypes)

    @property
    def rounds(self) -> bool:
        """Whether its scans may round: some leaf is a float and the monoid is not declared
        ``exact`` (otherwise its scan in its own arithmetic is the exact answer)."""
        return self.floats and not self.exact

    @property
    def has_elements(self) -> bool:
        """Whether its elements are a domain of its own (``elements``), not every value of
        each leaf's dtype."""
        return self._elements is not None

    def identity_like(self, shape: tuple[int, ...]) -> Leaves:
        """The identity, each leaf an array of ``shape``."""
        return tuple(np.full(shape, v, dtype=v.dtype) for v in self.identity)

    def apply(self, a: Leaves, b: Leaves, exact: bool = False) -> Leaves:
        """``combine(a, b)``, checked: as many leaves as the identity, each of the shape of
        ``a``'s and of its leaf's dtype (``exact``: Python-number object arrays allowed), or a
        :class:`MonoidError` saying what the combine returned."""
        with np.errstate(all="ignore"):
            out = self.combine(a, b)
        return self.checked(out, a, exact)

    def checked(self, out: Any, a: Leaves, exact: bool = False) -> Leaves:
        """``out``, what ``combine(a, b)`` returned, checked as :meth:`apply` checks it (a fold
        that calls the combine itself, under one ``np.errstate``, checks each result so)."""
        # What a fold's combine returns nearly always: a tuple of arrays (or scalars) of the
        # operands' shapes and the identity's own dtype objects (or objects, where exact),
        # which :meth:`_checked` would return as they are.  Anything else (a scalar to
        # broadcast, a leaf that is wrong) is left to it.
        if type(out) is tuple and len(out) == len(self.identity):
            leaves = tuple(map(np.asarray, out))
            try:
                for leaf, operand, want in zip(leaves, a, self.identity):
                    if leaf.dtype is not want.dtype and not (exact and leaf.dtype is _OBJECT) \
                            or leaf.shape != operand.shape:
                        break
                else:
                    return leaves
            except AttributeError:  # an operand that is a Python number (an exact fold's)
                pass
        return self._checked(out, a, exact)

    def _checked(self, out: Any, a: Leaves, exact: bool) -> Leaves:
        """:meth:`checked` leaf by leaf: each leaf's shape, broadcast where it is a scalar,
        and dtype, or the :class:`MonoidError` naming what is wrong."""
        if not isinstance(out, _SEQUENCES) or len(out) != len(self.identity):
            got = f"{len(out)} leaves" if isinstance(out, _SEQUENCES) else type(out).__name__
            raise MonoidError(f"monoid {self.name!r}: combine returned {got}; it must return a "
                              f"tuple of {len(self.identity)} arrays, one per leaf of the "
                              f"identity")
        leaves = []
        for i, (leaf, want) in enumerate(zip(out, self.identity)):
            leaf = np.asarray(leaf)
            try:  # np.shape's own rule, without its dispatch: one call per element of a fold
                shape = a[i].shape
            except AttributeError:
                shape = np.asarray(a[i]).shape
            if leaf.shape != shape:
                leaf = np.broadcast_to(leaf, shape) if leaf.ndim == 0 else leaf
            if leaf.shape != shape:
                raise MonoidError(f"monoid {self.name!r}: combine returned leaf {i} of shape "
                                  f"{leaf.shape} for operands of shape {shape}: it must work "
                                  f"elementwise")
            if not (exact and leaf.dtype == object) and leaf.dtype != want.dtype:
                raise MonoidError(f"monoid {self.name!r}: combine returned leaf {i} of dtype "
                                  f"{leaf.dtype}; the identity makes it {want.dtype}")
            leaves.append(leaf)
        return tuple(leaves)

    def draw(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Leaves:
        """``shape`` elements of this monoid, one array per leaf, from its own element
        strategy (where it has one: a Hypothesis strategy's are picked among the elements
        it draws, :data:`POOLS` pools of :data:`POOL`, all by ``rng``) or else from each
        leaf's dtype."""
        if _is_strategy(self._elements):
            k = int(rng.integers(POOLS))
            if k not in self._pools:  # drawing costs Hypothesis' time: each pool once
                self._pools[k] = self._pool(k)
            pick = rng.integers(0, self._pools[k][0].shape[0], shape)
            return tuple(v[pick] for v in self._pools[k])
        if self._elements is not None:
            out = tuple(np.asarray(v) for v in self._elements(rng, shape))
            if len(out) != len(self.identity) or any(
                    v.shape != shape or v.dtype != w.dtype for v, w in zip(out, self.identity)):
                raise MonoidError(f"monoid {self.name!r}: elements(rng, {shape}) returned "
                                  f"{[(v.shape, v.dtype.name) for v in out]}; it must return "
                                  f"arrays of shape {shape} of dtypes {', '.join(self.dtypes)}")
            return out
        return tuple(_leaf_values(rng, shape, d) for d in self.dtypes)


    def _pool(self, seed: int) -> Leaves:
        """:data:`POOL` elements drawn from the element strategy (a Hypothesis strategy;
        fewer where a filter lets few through), the same for the same ``seed`` in every
        process: one array per leaf, of the leaf's dtype; a :class:`MonoidError` where the
        strategy draws no such element or none at all."""
        import random

        from hypothesis.control import BuildContext
        from hypothesis.errors import StopTest
        from hypothesis.internal.conjecture.data import ConjectureData

        seeds, drawn, refused = random.Random(seed), [], 0
        while len(drawn) < POOL:
            # One run of the strategy as Hypothesis would draw it; a filter that rejects too
            # often, or an overrun, ends it, and another run goes on.
            data = ConjectureData(random=random.Random(seeds.getrandbits(64)))
            try:
                with BuildContext(data, is_final=True, wrapped_test=None):
                    while len(drawn) < POOL:
                        drawn.append(data.draw(self._elements))
            except StopTest:
                refused += 1
                if refused > 8 * POOL and drawn:
                    break  # a filter that rejects most: the pool is what it let through
                if refused > 8 * POOL:
                    raise MonoidError(f"monoid {self.name!r}: elements={self._elements!r} drew "
                                      f"no element in {refused} runs (a filter that rejects "
                                      f"everything?)") from None
        width = len(self.identity)
        rows = [e if isinstance(e, tuple) else (e,) for e in drawn]
        leaves = []
        for e in rows:
            if len(e) != width:
                raise self._not_an_element(e, "not one scalar per leaf")
        for i, want in enumerate(self.identity):
            try:
                leaves.append(np.array([e[i] for e in rows], dtype=want.dtype))
            except (ValueError, TypeError, OverflowError) as exc:
                bad = next((e for e in rows if not _fits(e[i], want.dtype)), rows[0])
                raise self._not_an_element(bad, str(exc)) from None
        return tuple(leaves)

    def _not_an_element(self, element: tuple, why: str) -> MonoidError:
        return MonoidError(f"monoid {self.name!r}: elements={self._elements!r} drew "
                           f"{element if len(element) > 1 else element[0]!r}: each element "
                           f"must be a tuple of {len(self.identity)} scalars, one per leaf, of "
                           f"dtypes {', '.join(self.dtypes)} ({why})")


def _fits(v: Any, dtype: np.dtype) -> bool:
    try:
        np.array([v], dtype=dtype)
    except (ValueError, TypeError, OverflowError):
        return False
    return True


#: A monoid's Hypothesis element strategy draws POOLS pools of POOL elements (each once, from
#: its own seed); each draw of a case picks one pool and its elements among the pool's.
POOL, POOLS = 256, 16


def _is_strategy(obj: object) -> bool:
    """Whether ``obj`` is a Hypothesis strategy (Hypothesis is not imported to tell: a
    strategy given means it is loaded)."""
    hs = sys.modules.get("hypothesis.strategies")
    return hs is not None and isinstance(obj, hs.SearchStrategy)


class BoundCombine:
    """A monoid's combine as a target that takes the combine is handed it: called as
    ``combine(a, b)`` on tuples of arrays, the identity at hand as ``combine.identity`` (an
    exclusive scan starts from it)."""

    def __init__(self, monoid: Monoid) -> None:
        self.monoid = monoid
        self.identity: Leaves = monoid.identity

    def __call__(self, a: Leaves, b: Leaves) -> Leaves:
        return tuple(self.monoid.combine(tuple(a), tuple(b)))

    def __repr__(self) -> str:
        return f"combine of {self.monoid.name!r}"


class MonoidError(ValueError):
    """A monoid's combine, identity or element strategy does not do what a monoid must."""


def _leaf_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Values of ``dtype``: any value of an integer type; small integers, halves and
    normal values of a float type (no NaN: a NaN is equal to nothing, itself included)."""
    dt = as_dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if not is_float(dt):
        info = np.iinfo(dt)
        return rng.integers(int(info.min), int(info.max), shape, dtype=dt, endpoint=True)
    kind = rng.integers(0, 3, shape)
    vals = np.where(kind == 0, rng.integers(-8, 9, shape),
                    np.where(kind == 1, rng.integers(-16, 17, shape) / 2, rng.normal(0, 4, shape)))
    return vals.astype(dt)


def namespace(a: Any) -> Any:
    """The array namespace of ``a`` (NumPy's for NumPy arrays and scalars, JAX's and torch's
    for theirs): what a probe's combine calls, so that a tracer gets its own functions."""
    # A tuple of types, not np.ndarray | np.generic: torch 2.13's dynamo cannot trace that union
    # (docs/findings.md), and the torch targets trace this under torch.compile.
    if isinstance(a, (np.ndarray, np.generic)):  # first: once per combine of every fold
        return np
    if hasattr(a, "__array_namespace__"):
        return a.__array_namespace__()
    torch = sys.modules.get("torch")  # torch tensors have no __array_namespace__ (torch 2.13)
    if torch is not None and isinstance(a, torch.Tensor):
        return torch
    return np


# The probes' combines: operators and namespace functions only (JAX and torch trace them).

def _affine(a: Leaves, b: Leaves) -> Leaves:
    # x -> m*x + c, then the later map: m2*(m1*x + c1) + c2, modulo 2**32.
    return (b[0] * a[0], b[0] * a[1] + b[1])


def _affine_elements(rng: np.random.Generator, shape: tuple[int, ...]) -> Leaves:
    # Odd multipliers: each map is invertible, so no element's effect is ever erased.
    m = rng.integers(0, 2**31, shape, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    return (m, rng.integers(0, 2**32, shape, dtype=np.uint32))


def _bicyclic(a: Leaves, b: Leaves) -> Leaves:
    # (p, q): q closing brackets then p opening ones, reduced; the later's closers cancel
    # the earlier's openers.
    xp = namespace(a[0])
    m = xp.minimum(a[0], b[1])
    return (a[0] - m + b[0], a[1] + b[1] - m)


def _bicyclic_elements(rng: np.random.Generator, shape: tuple[int, ...]) -> Leaves:
    return (rng.integers(0, 4, shape, dtype=np.int64), rng.integers(0, 4, shape, dtype=np.int64))


def _signed_affine_elements(rng: np.random.Generator, shape: tuple[int, ...]) -> Leaves:
    # Multipliers +-1 (float32) and offsets k * 2**-30, |k| < 2**28 (float64), fewer where
    # the scan is long: every partial offset is a multiple of 2**-30 below 2**22, exact in
    # float64 in any association order.  An offset carried in float32 loses its low bits, in
    # an integer type its fraction.
    n = max(shape, default=1)
    top = min(2**28, 2**52 // max(n, 1))
    m = rng.choice(np.array([-1.0, 1.0], np.float32), shape)
    return (m, rng.integers(-top, top + 1, shape) * 2.0**-30)


def _hash(a: Leaves, b: Leaves) -> Leaves:
    # (count, base**count, polynomial hash) of a sequence: the earlier hash shifted by the
    # later's length, mod 2**64.
    return (a[0] + b[0], a[1] * b[1], a[2] * b[1] + b[2])


_HASH_BASE = np.uint64(0x9E3779B97F4A7C15)


def _hash_elements(rng: np.random.Generator, shape: tuple[int, ...]) -> Leaves:
    return (np.ones(shape, dtype=np.int32), np.full(shape, _HASH_BASE, dtype=np.uint64),
            rng.integers(0, 2**64 - 1, shape, dtype=np.uint64, endpoint=True))


def _builtin(name: str, dtype: str) -> Monoid:
    """The table's operator ``name`` (add, max, min) at an integer ``dtype``, as a one-leaf
    monoid: its identity from the table's identity column."""
    oper = OPERATORS[name]
    combine: Combine
    if name == "add":
        def combine(a: Leaves, b: Leaves) -> Leaves:
            return (a[0] + b[0],)
    else:
        def combine(a: Leaves, b: Leaves) -> Leaves:
            return (getattr(namespace(a[0]), "maximum" if name == "max" else "minimum")(
                a[0], b[0]),)
    return Monoid(combine, (oper.identity(dtype)[()],), name=f"{name} ({dtype})",
                  commutative=oper.commutative)


#: scancheck's probe monoids, by name: exact in their own arithmetic, the first four
#: non-commutative (every reordering, skip or duplicate shows; the fourth's float leaves
#: show a leaf carried in an integer type or a narrower float), then the built-in operators.
PROBES: dict[str, Monoid] = {m.name: m for m in (
    Monoid(_affine, (np.uint32(1), np.uint32(0)), name="affine mod 2**32",
           elements=_affine_elements),
    Monoid(_bicyclic, (np.int64(0), np.int64(0)), name="bicyclic", elements=_bicyclic_elements),
    Monoid(_hash, (np.int32(0), np.uint64(1), np.uint64(0)), name="sequence hash",
           elements=_hash_elements),
    Monoid(_affine, (np.float32(1), np.float64(0)), name="signed affine (float32, float64)",
           elements=_signed_affine_elements, exact=True),
    _builtin("add", "int32"),
    _builtin("max", "int64"),
    _builtin("min", "uint32"),
)}


def load_monoid(locator: str) -> Monoid:
    """The :class:`Monoid` named ``package.module:ATTR`` or ``path/to/file.py:ATTR``, or a
    ValueError naming the locator and what is wrong with it."""
    from .loading import import_here, is_file_form, module_from_file

    module, _, attr = locator.rpartition(":") if is_file_form(locator) else locator.partition(":")
    if not module or not attr:
        raise ValueError(f"op={locator!r}: a user's operator is named module:ATTR or "
                         f"path/to/file.py:ATTR, ATTR a scancheck.Monoid")
    try:
        obj: Any = (module_from_file(module, f"op={locator!r}") if is_file_form(locator)
                    else import_here(module))
    except (ImportError, AttributeError) as exc:  # the module's own import failing
        raise ValueError(f"op={locator!r} cannot be loaded: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):  # named as the user wrote it, not as it was loaded
            raise ValueError(f"op={locator!r} cannot be loaded: {module} has no attribute "
                             f"{part!r}")
        obj = getattr(obj, part)
    if not isinstance(obj, Monoid):
        raise ValueError(f"op={locator!r} is a {type(obj).__name__}, not a scancheck.Monoid")
    obj.locator = locator
    return obj


def monoid_locator(monoid: Monoid) -> str:
    """The ``module:ATTR`` (or ``file.py:ATTR``) another process loads ``monoid`` back by:
    where it was loaded from, else a module-level name that holds it; a ValueError naming
    the argument where none does (a monoid made inside a function cannot be rebuilt)."""
    from .loading import locator_of

    found = monoid.locator or locator_of(monoid, getattr(monoid.combine, "__module__", None))
    if found is None:
        raise ValueError(f"op={monoid!r}: this monoid cannot be rebuilt in a child process, "
                         f"where the target is checked: no module holds it as a top-level "
                         f"attribute (was it made inside a function?); assign it to a name "
                         f"at module level (MY_OP = Monoid(...)) or give op='module:ATTR'")
    return found
