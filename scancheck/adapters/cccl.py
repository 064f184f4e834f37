"""``cuda.compute`` (the cuda-cccl Python package) inclusive and exclusive scans with a
Python operator, as targets that take the combine (``TargetSpec(combine=True)``).

cuda.compute compiles a Python function of two scalars (or two struct values) with
numba-cuda; a probe monoid's combine works on tuples of arrays.  The combine is traced
once with symbolic leaves (:class:`Sym`: operators and the namespace's ``minimum``,
``maximum`` and ``where``, what the probes' combines use) into the source of one such
function: a one-leaf monoid scans its dtype's scalars; a monoid of several leaves scans a
struct (an aligned NumPy record, field ``f<i>`` for leaf ``i``), its leaves packed on the
host.  Every result leaf is cast back to its leaf's dtype, the wrap-around of an integer
type kept (numba computes ``uint32 * uint32`` in 64 bits).  An exclusive scan starts from
``combine.identity``.

cuda.compute and CuPy are imported when a target is called, so that this module loads
anywhere; where either is missing, or no GPU is found, the targets are listed unavailable,
saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.monoids import Leaves
from ..targets.spec import TargetSpec
from .rows import Row

#: The leaf dtypes an operator may have here: numba-cuda's scalar types that a NumPy record
#: holds as they are (float16 and bool leaves are refused, saying so).
CCCL_LEAF_DTYPES: frozenset[str] = frozenset({
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64"})


class CcclOpError(ValueError):
    """A combine that cannot become a cuda.compute operator (what it used is named)."""


class Sym:
    """A symbolic scalar: the source text of an expression in the operator's arguments.
    Arithmetic on it builds a longer one; its truth value cannot be known while tracing."""

    def __init__(self, src: str) -> None:
        self.src = src

    def __array_namespace__(self) -> SymNamespace:
        return NAMESPACE

    def __bool__(self) -> bool:
        raise CcclOpError(f"the combine branches on {self.src} (an if, and, or, or a "
                          f"comparison chain): only operators and the namespace's minimum, "
                          f"maximum and where can be traced into a cuda.compute operator")

    def __repr__(self) -> str:
        return f"Sym({self.src!r})"


def _text(v: Any) -> str:
    """Source text of an operand: a symbol's expression, a NumPy scalar cast to its dtype
    (numba would otherwise type a literal int64 and promote, say, uint64 * it to float64),
    a Python number as it is."""
    if isinstance(v, Sym):
        return v.src
    if isinstance(v, np.generic) and v.dtype.name in CCCL_LEAF_DTYPES:
        return f"{v.dtype.name}({v.item()!r})"
    if isinstance(v, bool | int | float) and not isinstance(v, np.generic):
        return repr(v)
    raise CcclOpError(f"the combine used the constant {v!r} ({type(v).__name__}): only "
                      f"Python numbers and NumPy scalars of {', '.join(sorted(CCCL_LEAF_DTYPES))} "
                      f"can appear in a cuda.compute operator")


def _binary(op: str, reflected: bool = False) -> Callable[[Sym, Any], Sym]:
    def method(self: Sym, other: Any) -> Sym:
        a, b = (_text(other), self.src) if reflected else (self.src, _text(other))
        return Sym(f"({a} {op} {b})")
    return method


def _unary(op: str) -> Callable[[Sym], Sym]:
    def method(self: Sym) -> Sym:
        return Sym(f"({op}{self.src})")
    return method


for _name, _op in (("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"),
                   ("floordiv", "//"), ("mod", "%"), ("and", "&"), ("or", "|"),
                   ("xor", "^"), ("lshift", "<<"), ("rshift", ">>")):
    setattr(Sym, f"__{_name}__", _binary(_op))
    setattr(Sym, f"__r{_name}__", _binary(_op, reflected=True))
for _name, _op in (("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("eq", "=="),
                   ("ne", "!=")):
    setattr(Sym, f"__{_name}__", _binary(_op))
for _name, _op in (("neg", "-"), ("pos", "+"), ("invert", "~")):
    setattr(Sym, f"__{_name}__", _unary(_op))
Sym.__hash__ = None  # type: ignore[assignment]  # __eq__ builds an expression


class SymNamespace:
    """The array namespace a symbolic leaf answers (``namespace(a)``): ``minimum``,
    ``maximum`` and ``where`` as numba-cuda scalar code; any other function an error that
    names it."""

    @staticmethod
    def minimum(a: Any, b: Any) -> Sym:
        return Sym(f"min({_text(a)}, {_text(b)})")

    @staticmethod
    def maximum(a: Any, b: Any) -> Sym:
        return Sym(f"max({_text(a)}, {_text(b)})")

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Sym:
        return Sym(f"({_text(a)} if {_text(cond)} else {_text(b)})")

    def __getattr__(self, name: str) -> Any:
        raise CcclOpError(f"the combine called the namespace's {name}: only minimum, maximum "
                          f"and where (and operators) can be traced into a cuda.compute "
                          f"operator")


NAMESPACE = SymNamespace()


def record_dtype(dtypes: tuple[str, ...]) -> np.dtype:
    """The element type of a monoid of these leaf dtypes as cuda.compute scans it: the
    leaf's own dtype for one leaf, else an aligned record with field ``f<i>`` for leaf ``i``
    (the layout cuda.compute's structs have)."""
    bad = [d for d in dtypes if d not in CCCL_LEAF_DTYPES]
    if bad:
        raise CcclOpError(f"leaf dtypes {', '.join(bad)}: a cuda.compute operator here takes "
                          f"leaves of {', '.join(sorted(CCCL_LEAF_DTYPES))}")
    if len(dtypes) == 1:
        return np.dtype(dtypes[0])
    return np.dtype([(f"f{i}", d) for i, d in enumerate(dtypes)], align=True)


def operator_source(combine: Callable[[Leaves, Leaves], Leaves], dtypes: tuple[str, ...],
                    name: str = "op") -> str:
    """The source of ``def <name>(x, y)``, cuda.compute's operator for ``combine`` over
    elements of :func:`record_dtype` (``x`` earlier): ``combine`` traced once on symbolic
    leaves, each result cast to its leaf's dtype; a :class:`CcclOpError` saying what the
    combine did that cannot be traced, or where it returned the wrong number of leaves."""
    record_dtype(dtypes)  # refuses leaf dtypes a record cannot hold
    if len(dtypes) == 1:
        xs, ys = (Sym("x"),), (Sym("y"),)
    else:
        xs = tuple(Sym(f"x.f{i}") for i in range(len(dtypes)))
        ys = tuple(Sym(f"y.f{i}") for i in range(len(dtypes)))
    out = combine(xs, ys)
    if not isinstance(out, tuple | list) or len(out) != len(dtypes):
        got = f"{len(out)} leaves" if isinstance(out, tuple | list) else type(out).__name__
        raise CcclOpError(f"the combine returned {got} on symbolic leaves; it must return "
                          f"{len(dtypes)}, one per leaf")
    leaves = [f"{d}({_text(v)})" for v, d in zip(out, dtypes)]
    body = leaves[0] if len(leaves) == 1 else f"({', '.join(leaves)},)"
    # The docstring is a constant of the code object: cuda.compute caches a compiled
    # operator by its bytecode and constants, and two monoids' may share the bytecode.
    return (f"def {name}(x, y):\n"
            f"    \"\"\"scancheck: {combine!r} over {', '.join(dtypes)}\"\"\"\n"
            f"    return {body}\n")


def make_operator(combine: Callable[[Leaves, Leaves], Leaves], dtypes: tuple[str, ...]
                  ) -> Callable[[Any, Any], Any]:
    """The Python function :func:`operator_source` writes, defined (its globals: the
    NumPy scalar types it casts to, and ``min``/``max`` as Python has them)."""
    src = operator_source(combine, dtypes)
    scope: dict[str, Any] = {d: getattr(np, d) for d in CCCL_LEAF_DTYPES}
    exec(compile(src, f"<cuda.compute operator of {combine!r}>", "exec"), scope)
    fn = scope["op"]
    fn.__scancheck_source__ = src
    return fn


def pack(elems: Leaves, dtype: np.dtype) -> np.ndarray:
    """The leaves as one 1-D host array of ``dtype`` (:func:`record_dtype`)."""
    if dtype.names is None:
        return np.ascontiguousarray(elems[0], dtype=dtype)
    out = np.empty(np.shape(elems[0]), dtype=dtype)
    for name, v in zip(dtype.names, elems):
        out[name] = v
    return out


def unpack(arr: np.ndarray, dtypes: tuple[str, ...]) -> Leaves:
    """:func:`pack` undone: one array per leaf, of its dtype."""
    if arr.dtype.names is None:
        return (arr,)
    return tuple(np.ascontiguousarray(arr[name]).astype(d, copy=False)
                 for name, d in zip(arr.dtype.names, dtypes))


def identity_value(identity: Leaves, dtype: np.dtype) -> Any:
    """The identity as cuda.compute takes an initial value: a one-element array of a
    scalar dtype, or a read-only ``np.void`` of the record (cuda.compute hashes it as a
    cache key, and a writeable void scalar is unhashable: seen on the H200)."""
    if dtype.names is None:
        return np.asarray([identity[0]], dtype=dtype)
    held = np.array([tuple(v.item() for v in identity)], dtype=dtype)
    held.setflags(write=False)
    return held[0]


def cccl_scan(inclusive: bool) -> Callable[..., Leaves]:
    """cuda.compute's ``inclusive_scan`` (no initial value) or ``exclusive_scan`` (from
    ``combine.identity``) of a 1-D tuple of leaves under ``combine``, on CuPy arrays:
    the operator built once per combine and dtypes."""
    ops: dict[tuple[int, tuple[str, ...]], Any] = {}

    def run(elems: Leaves, combine: Callable) -> Leaves:
        import cuda.compute as cc
        import cupy as cp

        dtypes = tuple(np.asarray(v).dtype.name for v in elems)
        key = (id(combine), dtypes)
        if key not in ops:
            ops.clear()  # one combine at a time: no id is reused while it is held
            ops[key] = (combine, make_operator(combine, dtypes))
        op = ops[key][1]
        dtype = record_dtype(dtypes)
        host = pack(elems, dtype)
        n = host.shape[0]
        # Through bytes, both: CuPy makes no record array from a NumPy one, but views one.
        d_in = cp.asarray(host.view(np.uint8)).view(dtype)
        d_out = cp.empty(host.nbytes, dtype=np.uint8).view(dtype)
        # Keyword arguments alone (cuda-cccl 1.1 takes no positional ones); the inclusive
        # scan without an initial value, as a generic scan has none.
        if inclusive:
            cc.inclusive_scan(d_in=d_in, d_out=d_out, op=op, init_value=None, num_items=n)
        else:
            cc.exclusive_scan(d_in=d_in, d_out=d_out, op=op, num_items=n,
                              init_value=identity_value(combine.identity, dtype))
        return unpack(d_out.view(np.uint8).get().view(dtype), dtypes)

    return run


def cccl_rows() -> list[Row]:
    """The two cuda.compute scans with a Python operator.  cuda.compute compiles the operator
    with numba-cuda (its package numba_cuda); the namespace package cuda is asked first."""
    out = []
    for inclusive in (True, False):
        kind = "inclusive" if inclusive else "exclusive"
        # 1-D; an empty input is not asked for (the scans take num_items >= 1 here).
        spec = TargetSpec(combine=True, inclusive=inclusive, allows_empty=False, max_n=2**20)
        out.append(Row(f"cuda.compute {kind}_scan (op)", cccl_scan(inclusive), spec,
                       needs=("cuda", "cuda.compute", "numba_cuda"), gpu=True,
                       api=f"cuda.compute.{kind}_scan", mode=(("operator", "probe monoids"),)))
    return out


ROWS: tuple[Row, ...] = tuple(cccl_rows())

KNOWN: tuple = ()
