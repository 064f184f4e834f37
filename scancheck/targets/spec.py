"""What a target declares it computes: :class:`TargetSpec`, its validation and its flags.

Every field is one declaration (operator, dtypes, inclusive, zeros, NaN and subnormal
rules, promotions, device, limits); the CLI and the pytest plugin give each field a flag
of the same name, and :func:`with_overrides` replaces just the fields a user names.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from typing import Any

from ..core.arrays import as_dtype, dtype_name
from ..core.counts import check_flag, is_count
from ..core.dtypes import DTYPES, INPUT_DTYPES, KERNEL_DTYPES, is_float
from ..core.monoids import Monoid, load_monoid, monoid_locator
from ..core.operators import TARGET_OPERATORS, builtin_operator, get_operator
from ..core.rules import check_rules
from ..oracle.monoid_scan import REVERSE_CONVENTIONS
from .contracts import MAX_RANK, check_contracts

#: Where a target's arrays live: "cpu", NumPy arrays; "gpu", CuPy arrays.
DEVICES: tuple[str, ...] = ("cpu", "gpu")
#: How a segmented scan is told its segments, its second argument ``fn(x, s)``: "offsets"
#: (cu_seqlens: nseg + 1 of them, 0 to n, non-decreasing; int32 and int64 both drawn, or
#: "offsets:int32" / "offsets:int64" for a target that takes one, as a kernel does), "flags"
#: (bool, True where a segment starts), "keys" (a run of equal keys is a segment, as Thrust's
#: by-key scans), "groups" (labels in any order; each label's elements scan in order, as
#: pandas' ``groupby().cumsum()``).
SEGMENT_KINDS: tuple[str, ...] = ("offsets", "offsets:int32", "offsets:int64", "flags", "keys",
                                  "groups")


@dataclass(frozen=True)
class TargetSpec:
    """What a scan implementation claims to compute."""

    #: A built-in operator's name, a user's :class:`~scancheck.core.monoids.Monoid`, or
    #: ``module:ATTR`` naming one (the target is then called as ``fn(elems)``, ``elems`` a
    #: tuple of arrays, and returns one).
    op: str | Monoid = "add"
    inclusive: bool = True
    dtypes: tuple[str, ...] = KERNEL_DTYPES
    deterministic: bool = True
    #: "cpu": takes and returns NumPy arrays; "gpu": CuPy arrays.
    device: str = "cpu"
    #: Largest n it accepts (None: no limit of its own); on the command line
    #: ``--accepts-max-n``, since ``--max-n`` bounds the search's n, not the target's.
    max_n: int | None = None
    #: Whether it takes an empty input (and must return an empty scan).
    allows_empty: bool = True
    #: Max and min: how equal zeros are ordered (a key of ``rules.ZERO_ORDERS``).
    zeros: str = "either"
    #: Max and min: what a NaN does (a key of ``rules.NAN_RULES``).
    nans: str = "propagate"
    #: Floats: whether subnormals read as zero (a key of ``rules.SUBNORMAL_RULES``; what
    #: "flush" allows for each operator is its ``flush`` column, ``rules.FLUSH_RULES``).
    subnormals: str = "keep"
    #: (input dtype, output dtype) pairs where the scan returns a wider type than it takes,
    #: as NumPy's and PyTorch's default int32 -> int64; the oracle then scans in the wider one.
    promote: tuple[tuple[str, str], ...] = ()
    #: None: the target scans 1-D arrays.  An int: it takes N-D arrays and scans that axis.
    #: "arg": it takes N-D arrays and an axis, and is called as ``fn(x, axis)``.
    axis: int | str | None = None
    #: Whether it scans from the last element to the first (out[k] combines x[k:]); for a
    #: non-commutative operator, in which convention: "flip" (flip(scan(flip(x))), JAX's and
    #: Triton's) or "suffix" (x[k] + ... + x[n-1] in index order).
    reverse: bool | str = False
    #: Max and min: whether it returns (values, indices) as cummax and cummin do, each index
    #: the last position of its extreme (a NaN's, once one is seen).
    indices: bool = False
    #: Whether it takes an initial value, called as ``fn(x, initial=v)`` with ``v`` a scalar
    #: of x's dtype (CUB's and Thrust's exclusive scan with ``init``): output k combines v
    #: with x[:k] (exclusive) or x[:k+1] (inclusive).
    initial: bool = False
    #: None: one unbroken sequence.  A key of :data:`SEGMENT_KINDS`: the target scans each
    #: segment on its own, called as ``fn(x, s)``, the segments along axis 0 (``axis=0``: x
    #: is (T, H, ...), every column segmented alike).
    segments: str | None = None
    #: Whether it takes the combine: called as ``fn(elems, combine)`` (``fn(elems, combine,
    #: axis)`` with axis='arg'), ``elems`` a tuple of arrays, as jax.lax.associative_scan is;
    #: scancheck drives it with its probe monoids (and ``op``'s monoid where it is one).
    combine: bool = False
    #: Under nans="ignore": what an output whose whole prefix is NaN holds (a key of
    #: ``rules.NAN_PREFIXES``: "nan", or the operator's "identity" as pyarrow returns).
    nan_prefix: str = "nan"
    #: Integer add and mul: "wrap" (two's complement) or "raise" (checked arithmetic, as
    #: pyarrow's cumulative_sum_checked: it raises exactly when some prefix overflows).
    overflow: str = "wrap"
    #: With an axis: the ranks of array it takes (() for any; (2,) for DataFrame.cumsum).
    ndim: tuple[int, ...] = ()
    #: (input dtype, accumulator dtype) pairs of float scans that accumulate in a wider type
    #: and round each output once (polars' float32 sums in float64); checked as declared.
    accumulates: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.dtypes, str):  # a string is a sequence: of one-letter "dtypes"
            raise ValueError(f"dtypes={self.dtypes!r} must be a tuple of dtype names, as "
                             f"dtypes=({self.dtypes!r},)")
        for name in _BOOL_FIELDS:
            check_flag(name, getattr(self, name))
        if not (isinstance(self.reverse, bool) or (isinstance(self.reverse, str)
                                                   and self.reverse in REVERSE_CONVENTIONS)):
            raise ValueError(f"reverse={self.reverse!r}; allowed: False, True, 'flip' "
                             f"(flip(scan(flip(x)))), 'suffix' (x[k] + ... + x[n-1])")
        if not (self.axis is None or self.axis == "arg" or isinstance(self.axis, int)):
            raise ValueError(f"axis={self.axis!r} must be None (1-D), an int (the axis it "
                             f"scans) or 'arg' (it takes the axis as an argument)")
        if isinstance(self.axis, int) and not -MAX_RANK <= self.axis < MAX_RANK:
            raise ValueError(f"axis={self.axis} is past every rank checked: an axis is "
                             f"-{MAX_RANK} to {MAX_RANK - 1} (arrays of rank 1 to {MAX_RANK})")
        check_rules(self.zeros, self.nans, self.subnormals)
        check_contracts(self)
        for pair in self.promote:
            if len(pair) != 2 or pair[0] not in INPUT_DTYPES or pair[1] not in DTYPES:
                raise ValueError(f"promote={self.promote!r}: each entry must be (input dtype, "
                                 f"output dtype), the input one of {', '.join(INPUT_DTYPES)}, "
                                 f"the output one of {', '.join(DTYPES)}")
            if as_dtype(pair[1]).itemsize < as_dtype(pair[0]).itemsize or (
                    is_float(pair[0]) != is_float(pair[1])):
                raise ValueError(f"promote: {pair[0]} -> {pair[1]} is no promotion: it must "
                                 f"widen, integers (and bool) to integers, floats to floats")
        if self.device not in DEVICES:
            raise ValueError(f"device={self.device!r} must be one of {', '.join(DEVICES)}")
        if self.max_n is not None and not is_count(self.max_n):
            raise ValueError(f"max_n={self.max_n!r} must be None (any n) or the largest n the "
                             f"target takes, an integer >= 1")
        if over_tuples(self):
            if self.segments is not None:
                raise ValueError(f"segments={self.segments!r} with combine={self.combine}, "
                                 f"op={self.op!r}: segmented scans are checked with "
                                 f"add, mul, max, min and logaddexp, not over tuples")
            self._check_monoid()
            return
        try:
            oper = get_operator(self.op)
        except ValueError:  # named as the field it is given by
            raise ValueError(f"op={self.op!r} is unknown; allowed: {', '.join(TARGET_OPERATORS)}"
                             ) from None
        if self.reverse and not oper.commutative:
            raise ValueError(f"reverse=True with op={self.op!r}: a reverse scan of a "
                             f"non-commutative operator is not defined here; use add, max or min")
        if oper.not_a_target:
            raise ValueError(f"op={self.op!r} is {oper.not_a_target}")
        if self.indices and (oper.family != "order" or self.reverse):
            raise ValueError(f"indices=True with op={self.op!r}, reverse={self.reverse}: only "
                             f"forward max and min scans return indices here (cummax, cummin)")
        if self.indices and (self.zeros, self.nans) != ("either", "propagate"):
            # The indices' judge knows one convention (NaN wins, equal values go to the later
            # index, -0 ties +0): any other rule would be judged by that one, and a right
            # scan of it refused.
            raise ValueError(f"indices=True with zeros={self.zeros!r}, nans={self.nans!r}: "
                             f"indices are checked under zeros='either' and nans='propagate' "
                             f"(a NaN wins, equal values go to the later index, as "
                             f"torch.cummax does)")
        if self.initial and (self.axis is not None or self.reverse or self.indices):
            raise ValueError(f"initial=True with axis={self.axis!r}, reverse={self.reverse}, "
                             f"indices={self.indices}: an initial value is checked on forward "
                             f"1-D scans without indices (axis=None)")
        if self.segments is not None:
            self._check_segments()
        unknown = [d for d in self.dtypes if d not in INPUT_DTYPES]
        if unknown:
            raise ValueError(f"dtypes={self.dtypes!r}: {', '.join(map(str, unknown))} "
                             f"unknown; allowed dtypes are {', '.join(INPUT_DTYPES)}")
        if any(d == "bool" and self.output_dtype(d) == "bool" for d in self.dtypes) and (
                "bool" not in oper.dtypes):
            raise ValueError(f"dtypes include bool with op={self.op!r} and no promotion: in "
                             f"bool, + and * are a logical or and and; declare the integer "
                             f"type it returns (promote=(('bool', 'int64'),), on the command line "
                             f"--promote bool:int64, as NumPy and torch do), or op='max' or "
                             f"'min' for a running or or and")
        promotable = oper.width == 1 and "bool" not in oper.dtypes and "int64" in oper.dtypes
        bad = [d for d in self.dtypes if self.output_dtype(d) not in oper.dtypes
               or (d == "bool" and oper.width != 1)]
        if bad or not self.dtypes:
            raise ValueError(f"dtypes={self.dtypes!r} with op={self.op!r}: allowed dtypes are "
                             f"{', '.join(oper.dtypes)}"
                             + (" (and bool, promoted to an integer type)" if promotable else ""))

    @property
    def family(self) -> str:
        """Its operator's family (a key of :data:`~scancheck.core.operators.FAMILIES`), ""
        where ``op`` names no built-in operator (a user's monoid, an unknown name)."""
        oper = builtin_operator(self.op)
        return oper.family if oper is not None else ""

    def _check_monoid(self) -> None:
        """The rules of a target over tuples of arrays: a user's monoid, or the combine taken
        as an argument."""
        mono = monoid_of(self)
        if self.combine and mono is None and self.op != "add":
            raise ValueError(f"combine=True with op={self.op!r}: a target that takes the "
                             f"combine is driven by scancheck's probe monoids; leave op unset, "
                             f"or give a scancheck.Monoid (or module:ATTR) to add to them")
        commutative = mono is not None and mono.commutative and not self.combine
        if self.reverse is True and not commutative:
            given = "combine=True" if self.combine else f"op={self.op!r}"
            raise ValueError(f"reverse=True with {given}: "
                             f"for a non-commutative operator declare the convention, "
                             f"reverse='flip' (flip(scan(flip(x))), JAX's and Triton's) or "
                             f"reverse='suffix' (out[k] = x[k] + ... + x[n-1])")
        for field_name in ("indices", "initial"):
            if getattr(self, field_name):
                raise ValueError(f"{field_name}=True with a monoid over tuples of arrays "
                                 f"(op={self.op!r}, combine={self.combine}): not checked here")
        if self.promote:
            raise ValueError(f"promote={self.promote!r}: a monoid's leaves keep their dtypes")
        for name in _NUMBER_RULES:
            if getattr(self, name) != _default(name):
                raise ValueError(f"{name}={getattr(self, name)!r} with op={self.op!r}, combine="
                                 f"{self.combine}: a rule of scans of numbers; over tuples the "
                                 f"monoid's combine is the whole contract")
        unknown = [d for d in self.dtypes if d not in INPUT_DTYPES]
        if unknown:
            raise ValueError(f"dtypes={self.dtypes!r}: {', '.join(map(str, unknown))} "
                             f"unknown; allowed dtypes are {', '.join(INPUT_DTYPES)}")
        if self.dtypes != _default("dtypes"):
            raise ValueError(f"dtypes={self.dtypes!r} with op={self.op!r}, combine="
                             f"{self.combine}: over tuples each monoid's leaves have their own "
                             f"dtypes, and a declared one would go unread; to check float "
                             f"leaves, give a scancheck.Monoid over them as op")
        if self.device != "cpu":
            raise ValueError(f"device={self.device!r} with op={self.op!r}, combine="
                             f"{self.combine}: monoid targets are checked on the CPU here")

    def _check_segments(self) -> None:
        if self.segments not in SEGMENT_KINDS:
            raise ValueError(f"segments={self.segments!r} must be None (one sequence) or one "
                             f"of {', '.join(SEGMENT_KINDS)}")
        # The segments property judges each segment by the rules rows are judged by; these
        # contracts it does not read, and a rule accepted and not read would pass unchecked.
        unread = [f"{name}={getattr(self, name)!r}" for name in _UNSEGMENTED
                  if getattr(self, name) != _default(name)]
        if self.nans == "skip":
            unread.insert(0, "nans='skip'")
        if unread:
            raise ValueError(f"segments={self.segments!r} with {', '.join(unread)}: not checked "
                             f"on segmented scans yet; allowed there: nans 'propagate' or "
                             f"'ignore', the default overflow, accumulation and ranks")
        if self.axis not in (None, 0) or self.initial or self.indices:
            raise ValueError(f"segments={self.segments!r} with axis={self.axis!r}, initial="
                             f"{self.initial}, indices={self.indices}: a segmented scan is "
                             f"checked 1-D (axis=None) or along axis 0 of (T, H, ...) "
                             f"(axis=0), without an initial value or indices")
        if get_operator(self.op).width != 1:
            raise ValueError(f"segments={self.segments!r} with op={self.op!r}: segmented "
                             f"scans are checked with add, mul, max, min and logaddexp")

    def output_dtype(self, dtype: Any) -> str:
        """The dtype the scan returns for input of ``dtype`` (its own, unless promoted)."""
        return output_dtype(self.promote, dtype)


def reverse_convention(reverse: bool | str) -> str | None:
    """The convention of a spec's ``reverse``: None forward; True (a commutative operator)
    as 'flip'."""
    return None if not reverse else ("flip" if reverse is True else reverse)


def output_dtype(promote: Any, dtype: Any) -> str:
    """The dtype a scan declaring the (input, output) pairs ``promote`` returns for input of
    ``dtype`` (its own, unless promoted); ``promote`` as a spec or its JSON holds it."""
    name = dtype_name(dtype)
    return dict(map(tuple, promote)).get(name, name)


def monoid_of(spec: TargetSpec) -> Monoid | None:
    """The user's monoid a spec declares (``op`` a :class:`Monoid` or ``module:ATTR``), or
    None where ``op`` names a built-in operator."""
    if isinstance(spec.op, Monoid):
        return spec.op
    if isinstance(spec.op, str) and ":" in spec.op:
        return load_monoid(spec.op)
    if not isinstance(spec.op, str):
        raise TypeError(f"op={spec.op!r} must be an operator's name, a scancheck.Monoid or "
                        f"module:ATTR naming one")
    return None


#: The fields declared as a plain bool (True or False, nothing else); ``reverse`` also
#: takes a convention's name.
_BOOL_FIELDS = tuple(f.name for f in dataclasses.fields(TargetSpec) if f.type in ("bool", bool))
#: The contracts of scans of numbers: no rule of a monoid over tuples.
_NUMBER_RULES = ("nans", "nan_prefix", "overflow", "ndim", "accumulates", "zeros", "subnormals")
#: The contracts the segments property does not read yet (nans='skip' neither).
_UNSEGMENTED = ("nan_prefix", "overflow", "ndim", "accumulates")


def _default(name: str) -> Any:
    """A TargetSpec field's default value."""
    return TargetSpec.__dataclass_fields__[name].default


def ranks_taken(axis: int | str | None, ndim: tuple[int, ...]) -> tuple[int, ...]:
    """The ranks of array a target of this ``axis`` and ``ndim`` takes: ``ndim`` where
    declared; for a fixed axis that a 1-D array lacks (1, or -2), the least rank that has
    it and the two above (at most 8), since "any rank" can only mean those; else () (any)."""
    if ndim or not isinstance(axis, int) or -1 <= axis < 1:
        return tuple(ndim)
    least = axis + 1 if axis >= 0 else -axis
    return tuple(range(least, min(least + 2, MAX_RANK) + 1))


def over_tuples(spec: TargetSpec) -> bool:
    """Whether the target takes and returns tuples of arrays: it takes the combine, or its
    operator is a user's monoid."""
    return spec.combine or not isinstance(spec.op, str) or ":" in spec.op


def spec_json(spec: TargetSpec) -> dict[str, Any]:
    """``spec`` as JSON holds it, a user's monoid as the name it is loaded back by (a
    ValueError naming ``op`` where it has none)."""
    d = dataclasses.asdict(spec)
    if isinstance(d["op"], Monoid):
        d["op"] = monoid_locator(d["op"])
    return d


def spec_from_json(d: Any) -> TargetSpec:
    """A spec from its JSON form (:func:`spec_json`): lists back to tuples, the promotions'
    pairs too."""
    if not isinstance(d, dict):
        raise TypeError("not a JSON object")
    return TargetSpec(**{k: frozen(v) for k, v in d.items()})


def frozen(v: Any) -> Any:
    """``v`` with its lists (as JSON hands tuples back) made tuples, at any depth."""
    return tuple(frozen(e) for e in v) if isinstance(v, list | tuple) else v


def spec_flag(field_name: str) -> str:
    """The command-line flag that sets the :class:`TargetSpec` field ``field_name``: its
    name with dashes, except ``max_n``, which is ``--accepts-max-n`` (``--max-n`` is the
    search's largest n)."""
    return "--accepts-max-n" if field_name == "max_n" else "--" + field_name.replace("_", "-")


def with_overrides(spec: TargetSpec, overrides: dict[str, Any] | None, name: str = "the target"
                   ) -> TargetSpec:
    """``spec`` with just the fields ``overrides`` names replaced (lists read as tuples); a
    ValueError naming the flags and what is allowed where a name is no field or the result
    is no valid spec."""
    if not overrides:
        return spec
    fields = {f.name for f in dataclasses.fields(TargetSpec)}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ValueError(f"{', '.join(unknown)} is no TargetSpec field; allowed: "
                         f"{', '.join(sorted(fields))}")
    given = {k: frozen(v) for k, v in overrides.items()}
    flags = " ".join(_flag_text(k, v) for k, v in given.items())
    try:
        out = replace(spec, **given)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{flags}: on {name}'s declared spec ({_spec_text(spec)}): {exc}"
                         ) from None
    # A float rule given where no float is checked would be accepted and never read (a
    # library's own rules stay, when its dtypes are narrowed to integers).
    unread = [_flag_text(k, given[k]) for k in FLOAT_RULES if k in given
              and given[k] != _default(k)]
    if unread and not any(is_float(d) for d in out.dtypes):
        raise ValueError(f"{flags}: {' '.join(unread)} declares what float inputs do, and "
                         f"dtypes={out.dtypes!r} holds no float type: add one (float16, "
                         f"bfloat16, float32, float64) or leave the rule out")
    return out


#: The fields that say what float inputs do: NaNs, signed zeros, subnormals.
FLOAT_RULES = ("nans", "nan_prefix", "zeros", "subnormals")


def _flag_text(field_name: str, v: Any) -> str:
    """The flag that sets ``field_name`` to ``v``, as it is typed: --no-reverse, --op max."""
    flag = spec_flag(field_name)
    if isinstance(v, bool):
        return flag if v else "--no-" + flag[2:]
    if isinstance(v, tuple):
        return " ".join([flag, *(":".join(e) if isinstance(e, tuple) else str(e) for e in v)])
    return f"{flag} {'none' if v is None else v}"


#: The fields a library's documented contract sets beside its operator and dtypes.
CONTRACT_FIELDS = ("promote", *_NUMBER_RULES)


def contract_flags(spec: TargetSpec, dtype: str | None = None) -> str:
    """The command-line flags that declare ``spec``'s contract (the fields of
    :data:`CONTRACT_FIELDS` that differ from the defaults), as typed; with ``dtype``, those
    that bear on it alone (its promotion or accumulator; float rules for floats).  "" for
    the defaults."""
    flags = []
    floats_only = ("nans", "nan_prefix", "accumulates", "zeros", "subnormals")
    for name in CONTRACT_FIELDS:
        v = getattr(spec, name)
        if v == _default(name) or (dtype is not None and name in floats_only
                                   and as_dtype(dtype).kind != "f"):
            continue
        if name in ("promote", "accumulates") and dtype is not None:
            v = tuple(p for p in v if p[0] == dtype)
            if not v:
                continue
        flags.append(_flag_text(name, v))
    return " ".join(flags)


def _spec_text(spec: TargetSpec) -> str:
    """The fields of ``spec`` that differ from the defaults, as ``op='max', inclusive=False``."""
    base = TargetSpec()
    changed = [f"{f.name}={getattr(spec, f.name)!r}" for f in dataclasses.fields(spec)
               if getattr(spec, f.name) != getattr(base, f.name)]
    return ", ".join(changed) or "the defaults"
